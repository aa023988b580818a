package sandbox

import (
	"strings"
	"testing"
)

// TestUserNSFix: under AppArmor's restriction the way out is the bwrap profile, loaded
// with apparmor_parser, and the global switch comes only after it, as the last resort.
func TestUserNSFix(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sysctl map[string]string
		want   []string
		not    string
	}{
		{"AppArmor restricts", map[string]string{sysctlAppArmorUserNS: "1"},
			[]string{"sudo apparmor_parser -r /etc/apparmor.d/bwrap-userns-restrict", "/usr/share/apparmor/extra-profiles/bwrap-userns-restrict", "last resort", "kernel.apparmor_restrict_unprivileged_userns=0"}, ""},
		{"Debian's switch off", map[string]string{sysctlUserNSClone: "0"}, []string{"kernel.unprivileged_userns_clone=1"}, "apparmor_restrict"},
		{"neither known", map[string]string{}, []string{"user.max_user_namespaces", "bwrap-userns-restrict"}, "apparmor_restrict_unprivileged_userns=0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fix := userNSFix(func(name string) string { return tc.sysctl[name] })
			for _, w := range tc.want {
				if !strings.Contains(fix, w) {
					t.Errorf("fix %q does not say %q", fix, w)
				}
			}
			if tc.not != "" && strings.Contains(fix, tc.not) {
				t.Errorf("fix %q says %q", fix, tc.not)
			}
			if i, j := strings.Index(fix, "apparmor_parser"), strings.Index(fix, "apparmor_restrict_unprivileged_userns=0"); j >= 0 && (i < 0 || j < i) {
				t.Errorf("the global switch comes before the profile: %q", fix)
			}
		})
	}
}
