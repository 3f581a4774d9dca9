"""Dialogs and pickers of the TUI: model, session, tree, fork, settings (pi-product 2.8).

Each screen is a ``ModalScreen`` whose result is what was chosen (``None`` when cancelled);
:mod:`pi_coder.tui.screens.navigation` wires them to ``PiApp``. Screens are imported on
first use so the app starts without them.
"""
