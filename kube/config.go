package kube

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/homedir"
)

// ConfigFlags find the API server as kubectl does: --kubeconfig, else $KUBECONFIG (a list of
// files, merged), else ~/.kube/config, else the in-cluster ServiceAccount; --context picks a
// context other than the current one.
type ConfigFlags struct {
	Kubeconfig string
	Context    string
}

// AddFlags adds --kubeconfig and --context.
func (f *ConfigFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else in-cluster)")
	fs.StringVar(&f.Context, "context", "", "the kubeconfig context to use (default: the current context)")
}

// RESTConfig loads the client configuration the flags describe.
func (f *ConfigFlags) RESTConfig(userAgent string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.Kubeconfig
	if len(rules.Precedence) == 1 && rules.Precedence[0] == clientcmd.RecommendedHomeFile {
		// No $KUBECONFIG: the home directory as it is now (client-go fixes it at start-up).
		rules.Precedence = []string{filepath.Join(homedir.HomeDir(), clientcmd.RecommendedHomeDir, clientcmd.RecommendedFileName)}
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: f.Context})
	cfg, err := cc.ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, fmt.Errorf("no kubeconfig: set --kubeconfig or $KUBECONFIG, create ~/.kube/config, or run in a pod")
		}
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	cfg.UserAgent = userAgent
	return cfg, nil
}

// Ping asks the API server for its version, bounded by timeout: a quick, always-allowed request that
// tells an unreachable or misconfigured server at once instead of after a client's retries.
func (c *Client) Ping(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return c.rest.Get().AbsPath("/version").Do(ctx).Error()
}
