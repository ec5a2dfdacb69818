package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/yaml"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/fleet"
	"github.com/openshift/refresh-agent/kube"
	"github.com/openshift/refresh-agent/pacing"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/publish"
)

// defaultNamespace is where deploy/ runs the agents and where they read their pools' ConfigMaps.
const defaultNamespace = "refresh-agent"

// apiTimeout bounds a CLI command's requests; reachability is checked first, with a shorter bound.
const apiTimeout = 30 * time.Second

// connect builds a client from kubectl-style flags and checks the server answers, so that an
// unreachable server is reported at once.
func connect(ctx context.Context, kf *kube.ConfigFlags) (*kube.Client, error) {
	cfg, err := kf.RESTConfig("refresh-agent/" + version)
	if err != nil {
		return nil, err
	}
	client, err := kube.New(cfg)
	if err != nil {
		return nil, err
	}
	if err := client.Ping(ctx, 10*time.Second); err != nil {
		return nil, fmt.Errorf("cannot reach the API server at %s: %w", cfg.Host, err)
	}
	return client, nil
}

// poolFlags name a pool's ConfigMap: --configmap, else the template applied to --pool.
type poolFlags struct {
	namespace, pool, template, configMap *string
}

func addPoolFlags(fs *pflag.FlagSet) poolFlags {
	return poolFlags{
		namespace: fs.String("namespace", defaultNamespace, "the agents' namespace, which holds the pools' ConfigMaps"),
		pool:      fs.String("pool", "", "the NodePool: its ConfigMap is --configmap-template's, its nodes are labelled "+api.LabelNodePool+"=POOL"),
		template:  fs.String("configmap-template", api.DefaultConfigMapTemplate, "the ConfigMap name for a pool ({pool} is replaced)"),
		configMap: fs.String("configmap", "", "the ConfigMap's name (overrides --pool and --configmap-template)"),
	}
}

// name returns the ConfigMap's name, or "" when neither --configmap nor --pool gives one.
func (p poolFlags) name() string {
	if *p.configMap != "" {
		return *p.configMap
	}
	if *p.pool != "" {
		return api.ConfigMapName(*p.template, *p.pool)
	}
	return ""
}

// statusNode is one row of `status`: the node's annotations, its phase toward the hash, its age.
type statusNode struct {
	Name    string `json:"name"`
	Current string `json:"current"`
	Desired string `json:"desired"`
	State   string `json:"state"`
	Reason  string `json:"reason,omitempty"` // the reason annotation's text, a wait's included
	// Waiting is set while the node waits for a pacing slot.
	Waiting *api.Waiting `json:"waiting,omitempty"`
	Phase   string       `json:"phase"`
	Drift   string       `json:"drift,omitempty"` // the refreshDrift annotation: recorded files changed on the node
	Pool    string       `json:"pool,omitempty"`
	Created time.Time    `json:"created"`
}

// statusOutput is the JSON and YAML form of `status`.
type statusOutput struct {
	Hash       string             `json:"hash"`
	ConfigMap  string             `json:"configMap,omitempty"`
	Selector   string             `json:"selector"`
	Conditions []metav1.Condition `json:"conditions"`
	Nodes      []statusNode       `json:"nodes"`
}

func runStatus(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("status")
	pf := addPoolFlags(fs)
	selector := fs.String("selector", "", "label selector of the nodes (default: "+api.LabelNodePool+"=POOL)")
	hash := fs.String("hash", "", "the desired payload hash (default: the hash in the pool's ConfigMap)")
	output := fs.StringP("output", "o", "table", "output format: table, wide, json or yaml")
	var kf kube.ConfigFlags
	maxConcurrent := fs.String("max-concurrent", "0", "the agents' --max-concurrent, to say when the pool halted (0: from the nodes' reasons only)")
	watch := fs.BoolP("watch", "w", false, "follow the pool until it is Complete (exit 0), Degraded or halted (exit 1), or --timeout (exit 2)")
	timeout := fs.Duration("timeout", 0, "with --watch: give up after this long (exit 2); 0 waits for ever")
	kf.AddFlags(fs)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	limit, err := pacing.ParseLimit(*maxConcurrent)
	if err != nil {
		return fail(stderr, exitInvalid, "status: %v", err)
	}
	if *timeout < 0 {
		return fail(stderr, exitInvalid, "status: --timeout must not be negative")
	}
	switch *output {
	case "", "table", "text", "wide", "json", "yaml":
	default:
		return fail(stderr, exitInvalid, "status: --output must be table, wide, json or yaml, not %q", *output)
	}
	sel := *selector
	if sel == "" {
		if *pf.pool == "" {
			return fail(stderr, exitInvalid, "status: --pool (or --selector) is required")
		}
		sel = labels.Set{api.LabelNodePool: *pf.pool}.String()
	}
	if _, err := labels.Parse(sel); err != nil {
		return fail(stderr, exitInvalid, "status: --selector: %v", err)
	}
	cmName := pf.name()
	if *hash == "" && cmName == "" {
		return fail(stderr, exitInvalid, "status: --hash is required when neither --pool nor --configmap names the ConfigMap")
	}
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	client, err := connect(ctx, &kf)
	if err != nil {
		return fail(stderr, exitFailed, "status: %v", err)
	}
	out := statusOutput{Hash: *hash, Selector: sel}
	if cmName != "" {
		out.ConfigMap = *pf.namespace + "/" + cmName
	}
	if out.Hash == "" {
		cm, err := client.GetConfigMap(ctx, *pf.namespace, cmName)
		if apierrors.IsNotFound(err) {
			return fail(stderr, exitFailed, "status: ConfigMap %s not found: publish a payload for the pool first, or pass --hash", out.ConfigMap)
		}
		if err != nil {
			return fail(stderr, exitFailed, "status: ConfigMap %s: %v", out.ConfigMap, err)
		}
		if out.Hash = cm.Data[api.KeyHash]; out.Hash == "" {
			return fail(stderr, exitFailed, "status: ConfigMap %s has no %q key", out.ConfigMap, api.KeyHash)
		}
	}
	if *watch {
		cancel()
		return followPool(client, sel, out.Hash, limit, *timeout, stdout, stderr)
	}
	nodes, err := client.ListNodes(ctx, sel)
	if err != nil {
		return fail(stderr, exitFailed, "status: listing nodes: %v", err)
	}
	out.Conditions = fleet.PacedConditions(nodes, out.Hash, nil, time.Now(), limit.Slots(len(nodes)))
	out.Nodes = statusNodes(nodes, out.Hash)
	switch *output {
	case "json":
		err = writeJSON(stdout, out)
	case "yaml":
		var b []byte
		if b, err = yaml.Marshal(out); err == nil {
			_, err = stdout.Write(b)
		}
	default:
		err = writeStatusTable(stdout, out, *output == "wide", time.Now())
	}
	if err != nil {
		return fail(stderr, exitFailed, "writing output: %v", err)
	}
	return exitOK
}

// followPool follows the pool's Nodes toward hash like `kubectl rollout status`: one line per
// change (with a progress bar when stdout is a terminal), then exit 0 when Complete, 1 when
// Degraded or halted (the nodes and reasons on stderr), 2 on timeout or when no node matches.
func followPool(client *kube.Client, selector, hash string, limit pacing.Limit, timeout time.Duration, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancel(context.Background())
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(context.Background(), timeout)
	}
	defer cancel()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	bar := isTerminal(stdout)
	prev := ""
	outcome, last := publish.Follow(ctx, client.REST(), selector, hash, limit.Slots, func(p publish.Progress) {
		line := p.Line()
		if line == prev {
			return
		}
		prev = line
		if bar {
			line = publish.Bar(len(p.Summary.By[fleet.PhaseComplete]), p.Summary.Total, 20) + " " + line
		}
		fmt.Fprintln(stdout, line)
	})
	h := api.Short(hash)
	switch outcome {
	case publish.Complete:
		fmt.Fprintf(stdout, "refresh to %s complete: %s\n", h, last.Line())
		return exitOK
	case publish.Failed:
		fmt.Fprintf(stdout, "refresh to %s failed: %s\n", h, last.Line())
		fmt.Fprintf(stderr, "refresh-agent: %s\n", strings.ReplaceAll(last.Why(), hash, h))
		return exitFailed
	case publish.NoNodes:
		return fail(stderr, exitInvalid, "status: ConfigRefreshComplete False NoNodes: no node matches %s (is the pool's name right?)", selector)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fail(stderr, exitInvalid, "status: timed out after %s waiting for the refresh to %s: %s", timeout, h, last.Line())
	}
	return fail(stderr, exitInvalid, "status: interrupted: %s", last.Line())
}

// isTerminal reports whether w is a character device (a terminal, not a pipe or a file).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func statusNodes(nodes []corev1.Node, hash string) []statusNode {
	byName := map[string]corev1.Node{}
	for _, n := range nodes {
		byName[n.Name] = n
	}
	out := []statusNode{}
	for _, st := range fleet.Summarize(nodes, hash).Nodes {
		n := byName[st.Name]
		out = append(out, statusNode{Name: st.Name, Current: st.Current, Desired: st.Desired, State: st.State,
			Reason: st.ReasonText(), Waiting: st.Waiting, Phase: string(fleet.PhaseOf(st.NodeStatus, hash)), Drift: st.Drift,
			Pool: n.Labels[api.LabelNodePool], Created: n.CreationTimestamp.Time})
	}
	return out
}

// writeStatusTable prints kubectl-style columns, then the conditions. wide adds the phase and pool
// and prints whole hashes, drift lists and reasons; the table shortens hashes to 12 characters,
// in the conditions' messages too.
func writeStatusTable(w io.Writer, out statusOutput, wide bool, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	head := "NODE\tSTATE\tCURRENT\tDESIRED\tDRIFT\tAGE\tREASON"
	if wide {
		head += "\tPHASE\tPOOL"
	}
	hash := func(h string) string { return orNone(api.Short(h)) }
	if wide {
		hash = orNone
	}
	fmt.Fprintln(tw, head)
	for _, n := range out.Nodes {
		state := n.State
		if n.Phase == string(fleet.PhaseNoAgent) {
			state = "<none>"
		}
		reason, drift := oneLine(n.Reason), oneLine(n.Drift)
		if !wide {
			reason, drift = fitColumn(reason, 60), shortList(drift)
		}
		age := "<unknown>"
		if !n.Created.IsZero() {
			age = duration.HumanDuration(now.Sub(n.Created))
		}
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s", n.Name, orNone(state), hash(n.Current), hash(n.Desired), orNone(drift), age, reason)
		if wide {
			line += fmt.Sprintf("\t%s\t%s", n.Phase, orNone(n.Pool))
		}
		fmt.Fprintln(tw, line)
	}
	if len(out.Nodes) == 0 {
		fmt.Fprintf(tw, "(no nodes match %s)\n", out.Selector)
	}
	fmt.Fprintf(tw, "\nDesired hash %s", hash(out.Hash))
	if out.ConfigMap != "" {
		fmt.Fprintf(tw, " (ConfigMap %s)", out.ConfigMap)
	}
	fmt.Fprintln(tw, "\n\nCONDITION\tSTATUS\tREASON\tMESSAGE")
	for _, c := range out.Conditions {
		msg := oneLine(c.Message)
		if !wide && len(out.Hash) > 12 {
			msg = strings.ReplaceAll(msg, out.Hash, api.Short(out.Hash))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Type, c.Status, c.Reason, msg)
	}
	return tw.Flush()
}

// fitColumn cuts s to n runes for a table column, marking the cut (a column is as wide as its runes;
// api.Truncate bounds bytes, for what the API stores).
func fitColumn(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-3]) + "..."
}

// shortList keeps the first entry of a comma-separated list and counts the others.
func shortList(s string) string {
	first, rest, ok := strings.Cut(s, ",")
	if !ok {
		return fitColumn(s, 40)
	}
	return fmt.Sprintf("%s (+%d)", fitColumn(first, 40), strings.Count(rest, ",")+1)
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// oneLine keeps a reason on its row (tabs would break the columns too).
func oneLine(s string) string {
	return strings.NewReplacer("\n", " ", "\r", " ", "\t", " ").Replace(s)
}

func runPublish(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("publish")
	pf := addPoolFlags(fs)
	name := fs.String("name", "", "the ConfigMap's name")
	_ = fs.MarkDeprecated("name", "use --configmap, or --pool")
	payload := fs.String("payload", "", "the payload file (Ignition or MachineConfig, any encoding)")
	rules := fs.String("no-reboot-paths", "", "no-reboot-paths JSON file")
	hash := fs.String("hash", "", "the hash to publish (default: sha256 of the payload)")
	policy := fs.String("policy", "", "the nodes' policy file, to plan as they will judge (default: the built-in policy)")
	dryRun := fs.Bool("dry-run", false, "print the plan and publish nothing (exit 3 when the nodes would refuse)")
	force := fs.Bool("force", false, "publish even a payload the nodes would refuse (they write nothing and report Unreconcilable)")
	wait := fs.Bool("wait", false, "after publishing, follow the pool as status --watch does (exit 0 Complete, 1 Degraded or halted, 2 timeout)")
	timeout := fs.Duration("timeout", 15*time.Minute, "with --wait: give up after this long (exit 2); 0 waits for ever")
	maxConcurrent := fs.String("max-concurrent", "0", "with --wait: the agents' --max-concurrent, to say when the pool halted")
	selector := fs.String("selector", "", "with --wait: label selector of the pool's nodes (default: "+api.LabelNodePool+"=POOL)")
	createNS := fs.Bool("create-namespace", false, "create the namespace (labelled for privileged pods) when missing")
	var kf kube.ConfigFlags
	kf.AddFlags(fs)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if *pf.configMap == "" {
		*pf.configMap = *name
	}
	cmName := pf.name()
	if cmName == "" || *payload == "" {
		return fail(stderr, exitInvalid, "publish: --payload and --pool (or --configmap) are required")
	}
	limit, err := pacing.ParseLimit(*maxConcurrent)
	if err != nil {
		return fail(stderr, exitInvalid, "publish: %v", err)
	}
	sel := *selector
	if sel == "" && *pf.pool != "" {
		sel = labels.Set{api.LabelNodePool: *pf.pool}.String()
	}
	if *wait && sel == "" {
		return fail(stderr, exitInvalid, "publish: --wait needs --pool or --selector to find the pool's nodes")
	}
	if _, err := labels.Parse(sel); err != nil {
		return fail(stderr, exitInvalid, "publish: --selector: %v", err)
	}
	raw, err := readInput(*payload, diff.MaxPayloadSize)
	if err != nil {
		return fail(stderr, exitInvalid, "publish: %v", err)
	}
	desired, err := diff.Decode(raw)
	if err != nil {
		return fail(stderr, exitInvalid, "publish: %s: %v", *payload, err)
	}
	var rulesRaw []byte
	var parsedRules []allowlist.Rule
	if *rules != "" {
		if rulesRaw, err = readInput(*rules, allowlist.MaxRulesSize); err != nil {
			return fail(stderr, exitInvalid, "publish: %v", err)
		}
		if parsedRules, err = allowlist.ParseRules(rulesRaw); err != nil {
			return fail(stderr, exitInvalid, "publish: %s: no-reboot-paths: %v", *rules, err)
		}
	}
	pol, polName := allowlist.Default(), "the built-in node policy"
	if *policy != "" {
		if pol, err = allowlist.LoadPolicy(*policy); err != nil {
			return fail(stderr, exitInvalid, "publish: %v", err)
		}
		polName = "node policy " + *policy
	}
	if _, err := publish.Data(raw, rulesRaw, *hash); err != nil {
		return fail(stderr, exitInvalid, "publish: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	client, err := connect(ctx, &kf)
	if err != nil {
		return fail(stderr, exitFailed, "publish: %v", err)
	}
	if !*createNS {
		// Publishing into a namespace nobody installed the agents in is most often a typo.
		if _, err := client.GetNamespace(ctx, *pf.namespace); apierrors.IsNotFound(err) {
			return fail(stderr, exitFailed, "publish: namespace %s not found (install deploy/ first, or pass --create-namespace)", *pf.namespace)
		}
	}

	// The plan first: the new payload judged against the pool's published one, as a node would.
	ref := *pf.namespace + "/" + cmName
	cm, err := client.GetConfigMap(ctx, *pf.namespace, cmName)
	var published *diff.Payload
	switch {
	case apierrors.IsNotFound(err):
		fmt.Fprintf(stderr, "ConfigMap %s does not exist yet: no published payload to plan against; each node judges this one against what it runs\n", ref)
	case err != nil:
		return fail(stderr, exitFailed, "publish: ConfigMap %s: %v", ref, err)
	default:
		if published, err = diff.Decode([]byte(cm.Data[api.KeyConfig])); err != nil {
			fmt.Fprintf(stderr, "the payload published in ConfigMap %s does not decode (%v): no plan against it\n", ref, err)
		}
	}
	refused := false
	if published != nil {
		p, err := plan.Build(plan.Inputs{Current: published, Desired: desired, NoRebootPaths: parsedRules, Policy: pol})
		if err != nil {
			return fail(stderr, exitInvalid, "publish: %v", err)
		}
		fmt.Fprintf(stdout, "plan against the payload published in ConfigMap %s (hash %s), with %s:\n", ref, api.Short(cm.Data[api.KeyHash]), polName)
		if err := p.WriteText(stdout); err != nil {
			return fail(stderr, exitFailed, "writing output: %v", err)
		}
		refused = !p.Eligible
	} else if why := diff.CheckEmbedded(desired); why != "" {
		fmt.Fprintf(stdout, "refused: %s%s\n", why, plan.EmbeddedFix)
		refused = true
	}
	switch {
	case refused && *dryRun:
		fmt.Fprintln(stdout, "dry run: nothing published; the nodes would refuse this payload")
		return exitRefused
	case refused && !*force:
		return fail(stderr, exitRefused, "publish: the pool's nodes would refuse this payload, writing nothing and reporting Unreconcilable: nothing published (--force publishes it anyway)")
	case *dryRun:
		fmt.Fprintln(stdout, "dry run: nothing published")
		return exitOK
	}
	h, err := publish.Publish(ctx, client, *pf.namespace, cmName, raw, rulesRaw, *hash)
	if err != nil {
		return fail(stderr, exitFailed, "publish: %v", err)
	}
	fmt.Fprintf(stdout, "published %s to ConfigMap %s\n", h, ref)
	if !*wait {
		return exitOK
	}
	cancel()
	return followPool(client, sel, h, limit, *timeout, stdout, stderr)
}
