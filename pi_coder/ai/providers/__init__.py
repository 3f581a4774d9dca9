"""Provider implementations, one module per wire protocol.

- ``anthropic``: ``anthropic-messages`` (Anthropic Messages API over SSE)
- ``openai_completions``: ``openai-completions`` (Chat Completions and compatible servers)
- ``openai_responses``: ``openai-responses`` (OpenAI's Responses API)
- ``google``: ``google-generative-ai`` (Gemini ``streamGenerateContent``)
- ``faux``: scripted responses for tests and demos (``faux_provider``)

Each HTTP module exposes ``stream(model, context, options) -> AssistantMessageEventStream``.
``pi_coder.ai.registry.API_STREAMS`` names them by dotted string so that nothing here is
imported until a model of that API is first streamed; keep this file free of imports.
"""
