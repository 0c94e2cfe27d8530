"""The Discord face: a discord.py client with app commands, embeds, threads and persistent buttons, its settings, and its registry entry (platform.py). Imports discord.py and bot; never slack."""
