"""What a session reads from disk besides the conversation: context files, skills, prompt templates, themes, the system prompt."""
