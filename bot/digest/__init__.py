"""Feature: the weekly digest, one post per channel and ISO week gathered from every feature's section."""
