"""Checkpoints: file snapshots in a shadow git repository, tied to the session tree (/undo, /redo).

Layering: this package sits below ``pi_coder.core``. The session host (``core.agent_session``)
builds one :class:`~pi_coder.checkpoints.checkpoints.Checkpoints` per session and hands it what
it needs of core by injection: the session itself as a ``CheckpointHost`` (a Protocol of what is
used: agent, store, settings, run hooks, event subscription, navigation) and two callbacks that
emit core's events (a warning notice, and "the session was reloaded"). Nothing here imports
``pi_coder.core``, so the modes and the TUI reach checkpoints as ``session.checkpoints`` with full
types and no import cycle. ``bash_targets`` uses the shell analysis of ``pi_coder.permissions``.
"""
