package ops

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/redact"
)

// Command is an exact command: either Argv, executed directly without a shell, or Shell,
// a string run as `/bin/sh -c <Shell>` ([api.OpsCommand]).
type Command = api.OpsCommand

// validateCommand checks c's form; field names the plan field for the error.
func validateCommand(c Command, field string, required bool) error {
	if c.IsZero() {
		if required {
			return fieldErr(field, "is required: give argv (a list of words run without a shell) or shell (a string run by /bin/sh -c)")
		}
		return nil
	}
	if len(c.Argv) > 0 && c.Shell != "" {
		return fieldErr(field, "has both argv and shell: give exactly one")
	}
	if len(c.Argv) > 0 && strings.TrimSpace(c.Argv[0]) == "" {
		return fieldErr(field+".argv[0]", "is empty: the first word names the program")
	}
	if c.Shell != "" && strings.TrimSpace(c.Shell) == "" {
		return fieldErr(field+".shell", "is blank")
	}
	for i, a := range c.Argv {
		if strings.ContainsRune(a, 0) {
			return fieldErr(field+".argv["+strconv.Itoa(i)+"]", "contains a NUL byte")
		}
	}
	if strings.ContainsRune(c.Shell, 0) {
		return fieldErr(field+".shell", "contains a NUL byte")
	}
	if where, what := findCredential(c); what != "" {
		return fieldErr(field+where, fmt.Sprintf("carries a credential (%s): a plan's command is stored and hashed exactly, "+
			"so pass secrets through the environment the sandbox injects from the keyring instead of the command line", what))
	}
	return nil
}

// findCredential reports where a command carries a credential the redactor would hide.
func findCredential(c Command) (where, what string) {
	if c.Shell != "" {
		if kinds := redact.Kinds(c.Shell); len(kinds) > 0 {
			return ".shell", kinds[0]
		}
		return "", ""
	}
	// Judge argv joined, so `--password hunter2` split over two words is seen.
	if kinds := redact.Kinds(strings.Join(c.Argv, " ")); len(kinds) > 0 {
		return ".argv", kinds[0]
	}
	return "", ""
}
