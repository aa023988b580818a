package app

import (
	"fmt"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/config"
	"github.com/airlock-app/airlock/departments"
)

// Profile finds a profile by name among the built-in ones and config.toml's
// [profiles.NAME] as the core has loaded it (config.ErrUnknownProfile names the known).
func (c *Core) Profile(name string) (api.Profile, error) {
	st := c.Config.State()
	return config.LookupProfile(st.File, st.Path, name)
}

// Profiles lists every profile and the one config.toml chose.
func (c *Core) Profiles() api.ProfileList {
	st := c.Config.State()
	out := api.ProfileList{Profiles: config.Profiles(st.File, st.Path)}
	if st.File.Profile != nil {
		out.Current = *st.File.Profile
	}
	return out
}

// checkProfile refuses defaults or overrides that name a profile nobody defines.
func (c *Core) checkProfile(d api.Defaults) error {
	if d.Profile == "" {
		return nil
	}
	if _, err := c.Profile(d.Profile); err != nil {
		return fmt.Errorf("%w: %w", departments.ErrInvalid, err)
	}
	return nil
}
