package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/airlock-app/airlock/app/policy"
	"github.com/airlock-app/airlock/app/secrets"
)

// secretStored and secretRemoved are what `airlock secret set` and `rm` print under
// --json. The value itself is never printed.
type (
	secretStored struct {
		Stored string       `json:"stored"`
		Store  secrets.Kind `json:"store"`
	}
	secretRemoved struct {
		Removed string `json:"removed"`
	}
)

func newSecretCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{Use: "secret", Short: "Secrets in the store [secrets] store chooses (the OS keyring by default), injected into runs by name (never logged)"}
	cmd.AddCommand(&cobra.Command{
		Use:   "set NAME",
		Short: "Store a secret: the value is read from standard input, or asked for without echo on a terminal",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			value, err := readSecretValue(args[0])
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
			defer cancel()
			store, err := e.secretStore()
			if err != nil {
				return err
			}
			if err := store.Set(ctx, args[0], value); err != nil {
				return err
			}
			return e.print(secretStored{Stored: args[0], Store: store.Kind()}, func(w io.Writer) { fmt.Fprintf(w, "stored %s in %s\n", args[0], store.Where()) })
		},
	}, &cobra.Command{
		Use:   "rm NAME",
		Short: "Remove a secret",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
			defer cancel()
			store, err := e.secretStore()
			if err != nil {
				return err
			}
			if err := store.Delete(ctx, args[0]); err != nil {
				return err
			}
			return e.print(secretRemoved{Removed: args[0]}, func(w io.Writer) { fmt.Fprintf(w, "removed %s\n", args[0]) })
		},
	})
	return cmd
}

// SecretStore is the store config.toml's `[secrets] store` chooses, as the core opens it,
// for the instance getenv names (AIRLOCK_HOME, XDG): what airlock-agent reads its tokens from.
func SecretStore(getenv func(string) string) (secrets.Backend, error) {
	return (&env{getenv: getenv, stdout: io.Discard, stderr: io.Discard}).secretStore()
}

// secretStore is the store config.toml's `[secrets] store` chooses, as the core opens it.
func (e *env) secretStore() (secrets.Backend, error) {
	in, err := e.policyInputs(policy.Flags{}, "/")
	if err != nil {
		return nil, err
	}
	p, err := e.paths()
	if err != nil {
		return nil, err
	}
	return secrets.Open(secrets.Kind(in.File.SecretStore()), p.DataDir)
}

func readSecretValue(name string) (string, error) {
	if !term.IsTerminal(int(os.Stdin.Fd())) {
		// Not a terminal: the value comes on standard input (one line, or all of it).
		data, err := io.ReadAll(io.LimitReader(os.Stdin, 1<<20))
		if err != nil {
			return "", fmt.Errorf("read the value of %s: %w", name, err)
		}
		v := strings.TrimRight(string(data), "\r\n")
		if v == "" {
			return "", fmt.Errorf("no value for %s on standard input", name)
		}
		return v, nil
	}
	line, err := readHidden(os.Stdin, os.Stderr, fmt.Sprintf("value of %s (not shown): ", name))
	if err != nil || line == "" {
		return "", errors.New("no value typed")
	}
	return line, nil
}
