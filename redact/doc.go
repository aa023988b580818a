// Package redact removes credentials from text before Airlock stores or shows it: the
// permission audit and pending requests, the ops journal, plans and artifacts, dispatch
// run records and run logs all go through it, so one set of rules decides what a
// credential looks like.
//
// [String] finds credentials by shape: inline VAR=value assignments and "name": "value"
// fields of secret-looking names, the values of --password/--token/--secret style flags
// (and the short flags of tools that take a password, such as mysql -pSECRET, sshpass -p,
// redis-cli -a, curl -u user:pass), Authorization and Cookie headers, bearer and basic
// credentials, passwords in URLs, and known key shapes (AWS, GitHub, GitLab, Slack,
// OpenAI, Anthropic, Stripe, Google, npm, PyPI, Hugging Face and more, JWTs and PEM
// private key blocks). [StringWithSecrets] also hides exact values the caller knows (the
// secrets it injected), and [Writer] does the same to a stream line by line.
//
// JSON stays JSON: [RawJSON] and [Writer] (for a line that is a JSON document, as an
// agent's event stream is) replace values, keeping keys, punctuation and the numbers
// that count something (input_tokens, max_tokens).
//
// Redaction is idempotent: redacting redacted text changes nothing. Each credential is
// replaced by [Marker], keeping the name of the variable, flag or header so the reader
// still sees what was there.
//
// The package imports no other Airlock package, so every layer can use it.
package redact
