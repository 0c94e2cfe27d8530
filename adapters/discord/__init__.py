"""The Discord face: a discord.py client with app commands, embeds, threads and persistent buttons. Imports discord.py and bot; never slack."""
