package localapi

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/airlock-app/airlock/api"

	"github.com/airlock-app/airlock/app/eventbus"
)

// EventsHandler serves api.EventStream: the bus as server-sent events, `id: SEQ`,
// `event: TOPIC`, `data: <api.Event>`. ?topics=a,b limits the stream to those of
// api.Events; another name is refused, so a typo does not wait silently forever.
func EventsHandler(bus *eventbus.Bus) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		flusher, ok := w.(http.Flusher)
		if !ok {
			WriteError(w, &api.Error{Status: http.StatusInternalServerError, Code: api.CodeNoStream, Message: "streaming is not supported on this connection"})
			return
		}
		var q api.EventQuery
		if err := api.DecodeQuery(r.URL.Query(), &q); err != nil {
			WriteError(w, err)
			return
		}
		for _, t := range q.Topics {
			if _, ok := api.PayloadType(t); !ok {
				WriteError(w, api.Errorf(http.StatusBadRequest, api.CodeBadRequest, fmt.Sprintf("no event topic %q", t),
					"the topics are "+strings.Join(api.Topics(), ", ")))
				return
			}
		}
		topics := q.Topics
		sub := bus.Subscribe(256, topics...)
		defer sub.Close()
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, ": airlock events\n\n")
		flusher.Flush()
		heartbeat := time.NewTicker(15 * time.Second)
		defer heartbeat.Stop()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-heartbeat.C:
				fmt.Fprint(w, ": heartbeat\n\n")
				flusher.Flush()
			case ev, ok := <-sub.C:
				if !ok {
					return
				}
				data, _ := json.Marshal(ev)
				fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, ev.Topic, data)
				flusher.Flush()
			}
		}
	}
}

// readEvents parses a server-sent-event stream into events until it ends.
func readEvents(ctx context.Context, body *bufio.Reader, out chan<- api.Event) error {
	var data strings.Builder
	for {
		line, err := body.ReadString('\n')
		if err != nil {
			return err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if data.Len() > 0 {
				var ev api.Event
				if err := json.Unmarshal([]byte(data.String()), &ev); err == nil {
					select {
					case out <- ev:
					case <-ctx.Done():
						return ctx.Err()
					}
				}
				data.Reset()
			}
		case strings.HasPrefix(line, "data: "):
			data.WriteString(strings.TrimPrefix(line, "data: "))
		case strings.HasPrefix(line, "id: "):
			_, _ = strconv.ParseUint(strings.TrimPrefix(line, "id: "), 10, 64)
		}
	}
}
