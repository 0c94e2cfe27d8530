"""A subcommand's function named by where it lives, so the parser imports none of them."""

from __future__ import annotations

import argparse
from importlib import import_module


class Lazy:
    """A subcommand's function, named "module:function" and imported when it runs."""

    def __init__(self, target: str):
        self.module, self.__name__ = target.split(":")

    def __call__(self, args: argparse.Namespace) -> int:
        return getattr(import_module(self.module), self.__name__)(args)
