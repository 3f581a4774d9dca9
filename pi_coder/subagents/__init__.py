"""Subagents: the ``task`` tool, agent definition files and run budgets (``docs/subagents.md``)."""
