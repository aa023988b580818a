package gateway

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPHandler serves the governed tools over MCP's streamable HTTP transport. Every
// client session gets a Server of its own built from opts, so each has its own broker
// session and the same policy and tools as a stdio session. A session that sends no
// request for idle (0: never) is closed, so a client that went away without ending it
// costs nothing for long; a call still waiting (for the person, say) keeps its session.
// It does no authentication: put it behind localapi.LoopbackGuard.
func HTTPHandler(opts Options, idle time.Duration) http.Handler {
	// The SDK asks for a server on every request (for the protocol versions it speaks),
	// but connects one only for a request that opens a session. Requests within a session
	// get a shared server that is never connected; a request without a session id builds
	// at most one, which becomes the new session's.
	shared := NewServer(opts).mcp
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		if r.Header.Get("Mcp-Session-Id") != "" {
			return shared
		}
		if lazy, ok := r.Context().Value(sessionServerKey{}).(*lazyServer); ok {
			return lazy.get(opts)
		}
		return NewServer(opts).mcp
	}, &mcp.StreamableHTTPOptions{Logger: opts.Log, SessionTimeout: idle})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sessionServerKey{}, &lazyServer{})))
	})
}

type sessionServerKey struct{}

// lazyServer is the server a request without a session id opens its session with.
type lazyServer struct {
	once sync.Once
	srv  *mcp.Server
}

func (l *lazyServer) get(opts Options) *mcp.Server {
	l.once.Do(func() { l.srv = NewServer(opts).mcp })
	return l.srv
}
