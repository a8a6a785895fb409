"""Who may run a tool call: the policy, rules, bash's grammar for shell commands, sensitive paths and
egress. The same policy answers for every front end; they only ask the user its question."""
