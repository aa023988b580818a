package egress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"

	"golang.org/x/net/proxy"
)

// echoServer answers every byte with itself, on loopback.
func echoServer(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

type dialFunc func() (net.Conn, error)

func benchDialers(b *testing.B) (target string, ds map[string]dialFunc) {
	target = echoServer(b)
	_, paddr := startProxy(b, Config{Allowed: []string{"127.0.0.1"}, AllowLocal: true})
	socks, err := proxy.SOCKS5("tcp", paddr, nil, proxy.Direct)
	if err != nil {
		b.Fatal(err)
	}
	return target, map[string]dialFunc{
		"direct": func() (net.Conn, error) { return net.Dial("tcp", target) },
		"connect": func() (net.Conn, error) {
			c, err := net.Dial("tcp", paddr)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
			if err != nil || resp.StatusCode != 200 {
				c.Close()
				return nil, fmt.Errorf("CONNECT: %v %v", resp, err)
			}
			return c, nil
		},
		"socks5": func() (net.Conn, error) {
			return socks.(proxy.ContextDialer).DialContext(context.Background(), "tcp", target)
		},
	}
}

func roundTrip(c net.Conn) error {
	var b [1]byte
	if _, err := c.Write([]byte{'x'}); err != nil {
		return err
	}
	_, err := io.ReadFull(c, b[:])
	return err
}

// BenchmarkConnection: a new connection and one byte there and back, direct to a
// loopback server and through the proxy (CONNECT, SOCKS5): the difference is what the
// proxy adds to opening a connection.
func BenchmarkConnection(b *testing.B) {
	_, ds := benchDialers(b)
	for _, name := range []string{"direct", "connect", "socks5"} {
		dial := ds[name]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				c, err := dial()
				if err != nil {
					b.Fatal(err)
				}
				if err := roundTrip(c); err != nil {
					b.Fatal(err)
				}
				c.Close()
			}
		})
	}
}

// BenchmarkRoundTrip: one byte there and back on an open connection, direct and
// through an open tunnel.
func BenchmarkRoundTrip(b *testing.B) {
	_, ds := benchDialers(b)
	for _, name := range []string{"direct", "connect", "socks5"} {
		c, err := ds[name]()
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if err := roundTrip(c); err != nil {
					b.Fatal(err)
				}
			}
		})
		c.Close()
	}
}
