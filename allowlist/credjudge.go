package allowlist

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"
)

// The credential provider judges. The kubelet runs, as root, the plugin each provider of its
// CredentialProviderConfig names, from its plugin directory (--image-credential-provider-bin-dir,
// /usr/libexec/kubelet-image-credential-provider-plugins: under /usr, which no refresh writes),
// with the provider's args and env. The MCO's configs (templates/common/{aws,azure,gcp}/files/
// etc-kubernetes-credential-providers-*.yaml, and the crio-credential-provider that
// pkg/controller/container-runtime-config adds) set no env, and args from a short list. So: only
// config files directly in the directory (YAML or JSON, no other kind of file: a .so there is
// nothing the kubelet reads but what an LD_PRELOAD would load), each a CredentialProviderConfig in
// the kubelet's own fields, no env at all (LD_PRELOAD, LD_LIBRARY_PATH, GCONV_PATH… would run
// code in the root plugin), plugin names that cannot leave the plugin directory, and args from
// the MCO's (a plugin's --log_file or --config would make it write or read a path of the payload's
// choice as root).

// CredentialProvidersDir is the MCO's KubernetesCredentialProvidersDir.
const CredentialProvidersDir = "/etc/kubernetes/credential-providers"

// credProviderPluginDir is the kubelet's --image-credential-provider-bin-dir on RHCOS (the MCO's
// templates and its dropin say so).
const credProviderPluginDir = "/usr/libexec/kubelet-image-credential-provider-plugins"

// credentialProviderConfig is kubelet.config.k8s.io/v1 CredentialProviderConfig (k8s.io/kubelet
// config/v1), field for field (v1beta1 and v1alpha1 have the same ones, but tokenAttributes).
type credentialProviderConfig struct {
	APIVersion string               `json:"apiVersion"`
	Kind       string               `json:"kind"`
	Providers  []credentialProvider `json:"providers"`
}

type credentialProvider struct {
	Name                 string           `json:"name"`
	MatchImages          []string         `json:"matchImages"`
	DefaultCacheDuration *string          `json:"defaultCacheDuration,omitempty"`
	APIVersion           string           `json:"apiVersion"`
	Args                 []string         `json:"args,omitempty"`
	Env                  []map[string]any `json:"env,omitempty"`
	TokenAttributes      *struct {
		ServiceAccountTokenAudience          string   `json:"serviceAccountTokenAudience"`
		CacheType                            string   `json:"cacheType"`
		RequireServiceAccount                *bool    `json:"requireServiceAccount"`
		RequiredServiceAccountAnnotationKeys []string `json:"requiredServiceAccountAnnotationKeys,omitempty"`
		OptionalServiceAccountAnnotationKeys []string `json:"optionalServiceAccountAnnotationKeys,omitempty"`
	} `json:"tokenAttributes,omitempty"`
}

var (
	// pluginName is what the kubelet joins to its plugin directory: no separator, no dot name.
	pluginName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	// credConfigName is a config file the kubelet can be pointed at (or read from the directory).
	credConfigName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*\.(yaml|yml|json)$`)
	// verbosity is the one flag the MCO passes (gcr's --v=3).
	verbosity = regexp.MustCompile(`^--?v=[0-9]{1,2}$`)
)

// credProviderArgs are the other args the MCO's configs pass: gcr's subcommand, acr's cloud config.
var credProviderArgs = []string{"get-credentials", "/etc/kubernetes/cloud.conf"}

// IsCredentialProviderFile reports whether path is the credential providers directory (as a file,
// which the built-in rule's exact path also covers) or lies under it.
func IsCredentialProviderFile(p string) bool {
	return p == CredentialProvidersDir || strings.HasPrefix(p, CredentialProvidersDir+"/")
}

// JudgeCredentialProviderFile says why the file at p (under CredentialProvidersDir) must not be
// written with data, naming the field, or nil.
func JudgeCredentialProviderFile(p string, data []byte) error {
	if dir, base := path.Split(p); strings.TrimSuffix(dir, "/") != CredentialProvidersDir || !credConfigName.MatchString(base) {
		return fmt.Errorf("only CredentialProviderConfig files (NAME.yaml, .yml or .json) directly in %s are written: "+
			"the kubelet reads nothing else there, and another kind of file (a shared library) is only what an LD_PRELOAD would load", CredentialProvidersDir)
	}
	var cfg credentialProviderConfig
	if err := decodeKubeFile(data, &cfg); err != nil {
		return fmt.Errorf("credential provider config: %w", err)
	}
	if cfg.Kind != "CredentialProviderConfig" || !slices.Contains([]string{"kubelet.config.k8s.io/v1", "kubelet.config.k8s.io/v1beta1", "kubelet.config.k8s.io/v1alpha1"}, cfg.APIVersion) {
		return fmt.Errorf("credential provider config kind: %s of %s, not a CredentialProviderConfig of kubelet.config.k8s.io", shown(cfg.Kind), shown(cfg.APIVersion))
	}
	names := map[string]bool{}
	for i, pr := range cfg.Providers {
		at := fmt.Sprintf("credential provider config providers[%d]", i)
		if !pluginName.MatchString(pr.Name) {
			return fmt.Errorf("%s.name: %s: a plugin name in %s (no separator, not a dot name)", at, shown(pr.Name), credProviderPluginDir)
		}
		if names[pr.Name] {
			return fmt.Errorf("%s.name: %s is given twice", at, shown(pr.Name))
		}
		names[pr.Name] = true
		if len(pr.Env) > 0 {
			return fmt.Errorf("%s.env: no environment is passed to a plugin (the MCO's configs set none; "+
				"LD_PRELOAD, LD_LIBRARY_PATH or GCONV_PATH would make the root plugin load code)", at)
		}
		for j, a := range pr.Args {
			if !verbosity.MatchString(a) && !slices.Contains(credProviderArgs, a) {
				return fmt.Errorf("%s.args[%d]: %s is not one of the MCO's (get-credentials, /etc/kubernetes/cloud.conf, --v=N): "+
					"a plugin's flags can make it write or read a path as root", at, j, shown(a))
			}
		}
		if !slices.Contains([]string{"credentialprovider.kubelet.k8s.io/v1", "credentialprovider.kubelet.k8s.io/v1beta1", "credentialprovider.kubelet.k8s.io/v1alpha1"}, pr.APIVersion) {
			return fmt.Errorf("%s.apiVersion: %s", at, shown(pr.APIVersion))
		}
		if len(pr.MatchImages) == 0 {
			return fmt.Errorf("%s.matchImages: none", at)
		}
		if d := pr.DefaultCacheDuration; d != nil {
			if _, err := time.ParseDuration(*d); err != nil {
				return fmt.Errorf("%s.defaultCacheDuration: %s is not a duration", at, shown(*d))
			}
		}
	}
	return nil
}

// The kubelet dropin that turns on CRI-O's image credential provider
// (KubeletCrioImageCredProviderConfPath) holds, as the MCO writes it
// (generateDropinUnitCredProviderConfig), one Environment= line that the kubelet's ExecStart
// expands into its flags. Anything else in a kubelet dropin is a root command or environment.
const credProviderFlagsVar = "KUBELET_CRIO_IMAGE_CREDENTIAL_PROVIDER_FLAGS"

// JudgeCredProviderDropin says why the kubelet dropin data is not the MCO's shape, or nil: a
// [Service] section with at most that one Environment= assignment, whose value is the two flags
// with the plugin directory and a config file in CredentialProvidersDir.
func JudgeCredProviderDropin(data []byte) error {
	opts, err := UnitOptions(string(data))
	if err != nil {
		return fmt.Errorf("kubelet dropin: %w", err)
	}
	seen := false
	for _, o := range opts {
		if o.Section != "Service" || o.Name != "Environment" || seen {
			return fmt.Errorf("kubelet dropin: [%s] %s=: only one [Service] Environment=%s=… line, as the MCO writes it "+
				"(anything else in a kubelet dropin is a command or an environment of the root kubelet)", o.Section, o.Name, credProviderFlagsVar)
		}
		seen = true
		if err := judgeCredProviderFlags(o.Value); err != nil {
			return fmt.Errorf("kubelet dropin: [Service] Environment=: %w", err)
		}
	}
	return nil
}

func judgeCredProviderFlags(v string) error {
	if strings.ContainsAny(v, "\\%$'`") {
		return fmt.Errorf("escapes, specifiers and single quotes are not accepted")
	}
	if q, ok := strings.CutPrefix(v, `"`); ok {
		if v, ok = strings.CutSuffix(q, `"`); !ok || strings.Contains(v, `"`) {
			return fmt.Errorf("one double-quoted assignment only")
		}
	} else if strings.ContainsAny(v, "\" \t") {
		return fmt.Errorf("one assignment only")
	}
	val, ok := strings.CutPrefix(v, credProviderFlagsVar+"=")
	if !ok {
		return fmt.Errorf("only %s may be set", credProviderFlagsVar)
	}
	flags := strings.Fields(val)
	if len(flags) != 2 || flags[0] != "--image-credential-provider-bin-dir="+credProviderPluginDir {
		return fmt.Errorf("%s must be --image-credential-provider-bin-dir=%s --image-credential-provider-config=%s/NAME.yaml, nothing else "+
			"(another kubelet flag could move its static pods, its config or its authorization)", credProviderFlagsVar, credProviderPluginDir, CredentialProvidersDir)
	}
	cfg, ok := strings.CutPrefix(flags[1], "--image-credential-provider-config="+CredentialProvidersDir+"/")
	if !ok || !credConfigName.MatchString(cfg) {
		return fmt.Errorf("the config must be a NAME.yaml, .yml or .json file directly in %s", CredentialProvidersDir)
	}
	return nil
}
