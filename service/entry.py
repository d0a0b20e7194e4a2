"""The ``gongzhu`` command's entry point: a bot author's commands in any install, and the arena's
own where its dependencies are installed (:mod:`service.author_cli`)."""

from service.author_cli import main

__all__ = ["main"]
