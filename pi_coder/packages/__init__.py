"""Packages: extensions, skills, prompts and themes shared as Python distributions, git repositories or folders (docs/packages.md)."""
