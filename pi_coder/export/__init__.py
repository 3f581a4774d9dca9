"""Session export: the HTML viewer (``/export``, ``--export``) and a branch as a session file (``jsonl``).

``html`` writes the viewer page: ``page`` assembles one self-contained file from ``tree`` (the
entry forest in page order), ``entries`` (one ``<article>`` per entry, through
``pi_coder.core.transcript``), ``markup`` (Markdown and code, rendered with markdown-it-py and
Pygments, imported only when exporting), ``style`` (the theme's colours as CSS) and ``redact``
(secrets kept out of the page). The page's script and styles live in ``assets/``.
"""
