package config

import (
	_ "embed"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/airlock-app/airlock/api"
)

// ProfileFile is one [profiles.NAME] table, as Airlock's own profiles.toml and the
// person's config.toml write it. An absent key is left to the layers beneath.
type ProfileFile struct {
	Title             string  `toml:"title"`
	Description       string  `toml:"description"`
	Warning           string  `toml:"warning"`
	SandboxMode       *string `toml:"sandbox_mode"`
	ApprovalPolicy    *string `toml:"approval_policy"`
	ApprovalsReviewer *string `toml:"approvals_reviewer"`
	// NetworkAccess is false, true or "allowlist", as sandbox_workspace_write's.
	NetworkAccess any               `toml:"network_access"`
	Tiers         map[string]string `toml:"tiers"`
}

// EnvProfile chooses the profile of one command, as --profile does (which wins).
const EnvProfile = "AIRLOCK_PROFILE"

// ErrUnknownProfile is a profile name that neither Airlock nor config.toml defines.
var ErrUnknownProfile = errors.New("unknown profile")

//go:embed profiles.toml
var builtinData []byte

// builtinOrder is the order the shipped profiles are listed in: the four permission
// modes, then the presets of tool tiers.
var builtinOrder = []string{"ask", "approve-for-me", "read-only", "full-access", "personal", "shared", "beginner", "demo"}

var builtin = func() map[string]ProfileFile {
	var f struct {
		Profiles map[string]ProfileFile `toml:"profiles"`
	}
	dec := toml.NewDecoder(strings.NewReader(string(builtinData)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		panic("config: the built-in profiles.toml: " + err.Error())
	}
	if len(f.Profiles) != len(builtinOrder) {
		panic("config: the built-in profiles.toml and builtinOrder disagree")
	}
	for _, v := range validateProfiles(f.Profiles, false) {
		panic("config: the built-in profiles.toml: " + v.message)
	}
	return f.Profiles
}()

// Profile returns the profile pf as the wire shows it.
func (pf ProfileFile) Profile(name, source string) api.Profile {
	p := api.Profile{Name: name, Title: pf.Title, Description: pf.Description, Warning: pf.Warning, Source: source}
	if p.Title == "" {
		p.Title = name
	}
	if pf.SandboxMode != nil {
		p.SandboxMode = *pf.SandboxMode
		if p.SandboxMode == "danger-full-access" {
			p.SandboxMode = "full-access"
		}
	}
	if pf.ApprovalPolicy != nil {
		p.ApprovalPolicy = *pf.ApprovalPolicy
	}
	if pf.ApprovalsReviewer != nil {
		p.Reviewer = *pf.ApprovalsReviewer
	}
	if n, ok := networkValue(pf.NetworkAccess); ok {
		p.Network = &n
	}
	if len(pf.Tiers) > 0 {
		p.Tiers = maps.Clone(pf.Tiers)
	}
	if p.Warning == "" && p.SandboxMode == "full-access" && p.ApprovalPolicy == "never" {
		// The dangerous combination is said in words wherever it is defined.
		p.Warning = builtin["full-access"].Warning
	}
	return p
}

// Profiles lists every profile f can choose: the built-in ones, then the person's
// [profiles.NAME] in name order. path names config.toml as their source.
func Profiles(f File, path string) []api.Profile {
	out := make([]api.Profile, 0, len(builtinOrder)+len(f.Profiles))
	for _, name := range builtinOrder {
		out = append(out, builtin[name].Profile(name, api.ProfileBuiltIn))
	}
	for _, name := range slices.Sorted(maps.Keys(f.Profiles)) {
		out = append(out, f.Profiles[name].Profile(name, path))
	}
	return out
}

// ProfileNames are the names of Profiles(f), in the same order.
func ProfileNames(f File) []string {
	return append(slices.Clone(builtinOrder), slices.Sorted(maps.Keys(f.Profiles))...)
}

// LookupProfile finds the profile name among the built-in ones and f's. An unknown
// name is ErrUnknownProfile, naming the known ones.
func LookupProfile(f File, path, name string) (api.Profile, error) {
	if pf, ok := builtin[name]; ok {
		return pf.Profile(name, api.ProfileBuiltIn), nil
	}
	if pf, ok := f.Profiles[name]; ok {
		return pf.Profile(name, path), nil
	}
	return api.Profile{}, fmt.Errorf("%w %q: %s", ErrUnknownProfile, name, knownProfiles(f))
}

// knownProfiles is the way out of an unknown profile name.
func knownProfiles(f File) string {
	return "use one of " + strings.Join(ProfileNames(f), ", ") + " (`airlock profile list` shows them), or define it in config.toml as [profiles.NAME]"
}

// ChosenProfile is the profile config.toml chose (profile = "NAME"); ok is false when it
// chose none.
func ChosenProfile(f File, path string) (api.Profile, bool, error) {
	if f.Profile == nil || *f.Profile == "" {
		return api.Profile{}, false, nil
	}
	p, err := LookupProfile(f, path, *f.Profile)
	return p, err == nil, err
}

// validateProfiles checks the keys of each [profiles.NAME] as the top-level keys are
// checked, with the same choices.
// reserve refuses the built-in names (the person's file may not redefine them).
func validateProfiles(profiles map[string]ProfileFile, reserve bool) []violation {
	var out []violation
	for _, name := range slices.Sorted(maps.Keys(profiles)) {
		pf := profiles[name]
		key := "profiles." + name
		if reserve && slices.Contains(builtinOrder, name) {
			out = append(out, violation{key, fmt.Sprintf("[profiles.%s]: %q is a built-in profile; give yours another name", name, name)})
			continue
		}
		for _, c := range []struct {
			key string
			v   *string
		}{{"sandbox_mode", pf.SandboxMode}, {"approval_policy", pf.ApprovalPolicy}, {"approvals_reviewer", pf.ApprovalsReviewer}} {
			if c.v != nil && !slices.Contains(choices[c.key], *c.v) {
				out = append(out, violation{key + "." + c.key, fmt.Sprintf("[profiles.%s] %s = %q is not one of %s", name, c.key, *c.v, strings.Join(choices[c.key], ", "))})
			}
		}
		if v := pf.NetworkAccess; v != nil {
			if _, ok := networkValue(v); !ok {
				out = append(out, violation{key + ".network_access", fmt.Sprintf("[profiles.%s] network_access = %s is not one of false, \"allowlist\" or true", name, tomlText(v))})
			}
		}
		for _, tool := range slices.Sorted(maps.Keys(pf.Tiers)) {
			if t := pf.Tiers[tool]; t != "P0" && t != "P1" && t != "P2" {
				out = append(out, violation{key + ".tiers." + tool, fmt.Sprintf("[profiles.%s] tier of %q is %q: use P0 (silent), P1 (asks once) or P2 (asks every time)", name, tool, t)})
			}
		}
	}
	return out
}
