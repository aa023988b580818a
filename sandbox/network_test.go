package sandbox

import "github.com/airlock-app/airlock/api"

// netp is a network layer value from the old boolean, for tests written with it.
func netp(on bool) *NetworkMode {
	n := api.NetworkFromBool(on)
	return &n
}
