"""A toy feature for tests/test_plugins.py: a table, a setting, a page, a subcommand and a digest section."""

from __future__ import annotations

import argparse

from bot.feature import Feature, PageRoute, Plugin


def _feature() -> type[Feature]:
    from tests.toy_feature.feature import QuoteFeature

    return QuoteFeature


def _cli(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("quotes", help="print a channel's quotes")
    p.add_argument("channel")
    p.set_defaults(func=lambda args: print(f"quotes of {args.channel}") or 0)


PLUGIN = Plugin("toy_feature", _feature, routes=(PageRoute("/quotes/", "/quotes/CHANNEL", "a channel's quotes"),),
                cli=_cli)
