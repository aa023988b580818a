package agentcmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/airlock-app/airlock/app/cli"
	"github.com/airlock-app/airlock/app/gateway"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/app/secrets"
)

// mcpTokenName is the keyring name of `airlock mcp --http`'s bearer token. It is not the
// local API's api.token: a client given this one can call the governed tools (each still
// through the broker), not answer questions or change settings.
const mcpTokenName = "mcp.token"

// mcpHTTPPath is where the streamable HTTP endpoint is served.
const mcpHTTPPath = "/mcp"

// mcpToken reads the bearer token from the secret store config.toml chooses (the OS
// keyring unless `[secrets] store = "file"`), minting it on first use.
func mcpToken(ctx context.Context, e *env) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	store, err := cli.SecretStore(e.getenv)
	if err != nil {
		return "", fmt.Errorf("the bearer token of airlock mcp --http: %w", err)
	}
	tok, err := secrets.Token(ctx, store, mcpTokenName)
	if err != nil {
		return "", fmt.Errorf("the bearer token of airlock mcp --http: %w", err)
	}
	return tok, nil
}

func newMCPTokenCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "token",
		Short: "Print the bearer token `airlock mcp --http` requires (created in the secret store on first use)",
		Long: "Prints the token an MCP client sends as `Authorization: Bearer <token>` to `airlock mcp --http`.\n" +
			"It is kept in the secret store (`airlock status` names it) as " + mcpTokenName + " and created the first time it is needed.\n" +
			"To replace it: airlock secret rm " + mcpTokenName + " (clients then need the new one).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tok, err := mcpToken(cmd.Context(), e)
			if err != nil {
				return err
			}
			fmt.Fprintln(e.stdout, tok)
			return nil
		},
	}
}

// listenMCPHTTP binds addr (loopback only) and reads the token, before anything else
// starts, so a wrong address or a missing keyring fails at once.
func listenMCPHTTP(ctx context.Context, e *env, addr string) (net.Listener, string, error) {
	ln, err := localapi.ListenLoopback(addr)
	switch {
	case errors.Is(err, localapi.ErrNotLoopback):
		return nil, "", fmt.Errorf("airlock mcp --http: %w (MCP over HTTP is for clients on this machine; a client elsewhere "+
			"should run `airlock mcp` over stdio where Airlock runs)", err)
	case errors.Is(err, syscall.EADDRINUSE):
		return nil, "", fmt.Errorf("airlock mcp --http: %w: another program listens there (another airlock mcp --http?); "+
			"stop it or pick another port", err)
	case err != nil:
		return nil, "", fmt.Errorf("airlock mcp --http: %w", err)
	}
	tok, err := mcpToken(ctx, e)
	if err != nil {
		ln.Close()
		return nil, "", err
	}
	return ln, tok, nil
}

// serveMCPHTTP serves the governed tools over streamable HTTP on ln until ctx ends or
// the process is interrupted.
func serveMCPHTTP(ctx context.Context, e *env, ln net.Listener, token string, idle time.Duration, opts gateway.Options) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	guard := localapi.LoopbackGuard{
		Token:           token,
		LoopbackOrigins: true,
		OriginHint:      "only a page on this machine's loopback (http://127.0.0.1:PORT, http://localhost:PORT) may connect from a browser",
		TokenHint:       "send Authorization: Bearer <token> with the token `airlock mcp token` prints (kept in the OS keyring as " + mcpTokenName + ")",
	}
	mux := http.NewServeMux()
	mux.Handle(mcpHTTPPath, gateway.HTTPHandler(opts, idle))
	srv := &http.Server{Handler: guard.Wrap(mux), ReadHeaderTimeout: 10 * time.Second}
	url := "http://" + ln.Addr().String() + mcpHTTPPath
	fmt.Fprintf(e.stderr, "airlock mcp: serving MCP (streamable HTTP) at %s; clients send Authorization: Bearer $(airlock mcp token)\n", url)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("airlock mcp --http: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		srv.Close()
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("airlock mcp --http: %w", err)
	}
	return nil
}
