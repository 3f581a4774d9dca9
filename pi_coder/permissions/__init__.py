"""Who may do what: folder trust, the permission gate and its rules, bash command analysis, the sandbox."""
