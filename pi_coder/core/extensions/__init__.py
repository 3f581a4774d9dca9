"""The extension system's core (extensions §0.2): loader, runner, event types, ctx. UI-free.

Imported only when some extension source is present (start-up cost, §1.4). Authors import
from the facade ``pi_coder.extensions``.
"""
