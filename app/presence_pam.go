//go:build linux && cgo

package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/msteinert/pam/v2"
)

// pamAvailable: this core runs PAM conversations.
const pamAvailable = true

// pamAuthenticate runs one PAM conversation for user with service: the first
// password prompt gets password, any other prompt fails the conversation; then the
// account must be valid. confDir "" is /etc/pam.d.
func pamAuthenticate(ctx context.Context, service, confDir, user, password string) error {
	return pamRun(ctx, service, confDir, user, func() (string, error) { return password, nil })
}

// pamPasswordless runs service's stack for user with a conversation that answers no
// prompt: nil means the stack let the user through without a password (pam_rootok
// for root, pam_permit).
func pamPasswordless(ctx context.Context, service, confDir, user string) error {
	return pamRun(ctx, service, confDir, user, func() (string, error) {
		return "", errors.New("no password is given to this check")
	})
}

// pamRun runs one conversation: secret answers the first password prompt.
func pamRun(ctx context.Context, service, confDir, user string, secret func() (string, error)) error {
	answered := false
	conv := pam.ConversationFunc(func(s pam.Style, msg string) (string, error) {
		switch s {
		case pam.PromptEchoOff:
			if answered {
				return "", errors.New("PAM asked for a second secret")
			}
			answered = true
			return secret()
		case pam.PromptEchoOn:
			return "", fmt.Errorf("PAM asked %q, which only the password answers here", msg)
		}
		return "", nil // informational messages
	})
	done := make(chan error, 1)
	go func() {
		var tx *pam.Transaction
		var err error
		if confDir != "" {
			tx, err = pam.StartConfDir(service, user, conv, confDir)
		} else {
			tx, err = pam.Start(service, user, conv)
		}
		if err != nil {
			done <- fmt.Errorf("start PAM service %s: %w", service, err)
			return
		}
		defer tx.End()
		if err := tx.Authenticate(pam.DisallowNullAuthtok); err != nil {
			done <- err
			return
		}
		done <- tx.AcctMgmt(pam.Silent | pam.DisallowNullAuthtok)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
