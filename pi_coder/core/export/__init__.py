"""The HTML session viewer written by ``/export`` and ``--export`` (see ``pi_coder.core.export_html``).

``page`` assembles one self-contained file from ``tree`` (the entry forest in page order),
``entries`` (one ``<article>`` per entry, through ``pi_coder.core.transcript``), ``markup``
(Markdown and code, rendered with markdown-it-py and Pygments, imported only when exporting),
``style`` (the theme's colours as CSS) and ``redact`` (secrets kept out of the page). The page's
script and styles live in ``assets/``.
"""
