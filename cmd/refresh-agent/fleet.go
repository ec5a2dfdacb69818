package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/fleet"
	"github.com/openshift/refresh-agent/kube"
	"github.com/openshift/refresh-agent/pacing"
	"github.com/openshift/refresh-agent/publish"
)

func kubeClient(kubeconfig string) (*kube.Client, error) {
	if kubeconfig == "" {
		kubeconfig = os.Getenv("KUBECONFIG")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	cfg.UserAgent = "refresh-agent/" + version
	return kube.New(cfg)
}

// statusOutput is the JSON form of `status`.
type statusOutput struct {
	Hash       string             `json:"hash"`
	Conditions []metav1.Condition `json:"conditions"`
	Nodes      []fleet.NodeStatus `json:"nodes"`
}

func runStatus(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	selector := fs.String("selector", "", "label selector of the NodePool's nodes")
	hash := fs.String("hash", "", "the desired payload hash")
	output := fs.String("output", "text", "text or json")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file (default $KUBECONFIG, else in-cluster)")
	maxConcurrent := fs.String("max-concurrent", "0", "the agents' --max-concurrent, to say when the pool halted (0: from the nodes' reasons only)")
	if err := fs.Parse(args); err != nil {
		return exitInvalid
	}
	if *hash == "" {
		return fail(stderr, exitInvalid, "status: --hash is required")
	}
	limit, err := pacing.ParseLimit(*maxConcurrent)
	if err != nil {
		return fail(stderr, exitInvalid, "status: %v", err)
	}
	if *output != "text" && *output != "json" {
		return fail(stderr, exitInvalid, "status: --output must be text or json, not %q", *output)
	}
	if _, err := labels.Parse(*selector); err != nil {
		return fail(stderr, exitInvalid, "status: --selector: %v", err)
	}
	client, err := kubeClient(*kubeconfig)
	if err != nil {
		return fail(stderr, exitInvalid, "status: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nodes, err := client.ListNodes(ctx, *selector)
	if err != nil {
		return fail(stderr, exitFailed, "status: listing nodes: %v", err)
	}
	out := statusOutput{Hash: *hash, Conditions: fleet.PacedConditions(nodes, *hash, nil, time.Now(), limit.Slots(len(nodes))),
		Nodes: fleet.Summarize(nodes, *hash).Nodes}
	if out.Nodes == nil {
		out.Nodes = []fleet.NodeStatus{}
	}
	if *output == "json" {
		if err := writeJSON(stdout, out); err != nil {
			return exitFailed
		}
		return exitOK
	}
	var b strings.Builder
	for _, c := range out.Conditions {
		fmt.Fprintf(&b, "%-25s %-5s %s: %s\n", c.Type, c.Status, c.Reason, c.Message)
	}
	for _, n := range out.Nodes {
		fmt.Fprintf(&b, "node %s: %s current=%s desired=%s", n.Name, n.PhaseOf(*hash), short(n.Current), short(n.Desired))
		if n.Reason != "" {
			fmt.Fprintf(&b, " reason=%q", n.Reason)
		}
		b.WriteString("\n")
	}
	_, _ = io.WriteString(stdout, b.String())
	return exitOK
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return "-"
	}
	return h
}

func runPublish(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("publish", flag.ContinueOnError)
	fs.SetOutput(stderr)
	namespace := fs.String("namespace", "", "the ConfigMap's namespace (created when missing)")
	name := fs.String("name", "", "the ConfigMap's name")
	payload := fs.String("payload", "", "the payload file (Ignition or MachineConfig, any encoding)")
	rules := fs.String("no-reboot-paths", "", "no-reboot-paths JSON file")
	hash := fs.String("hash", "", "the hash to publish (default: sha256 of the payload)")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file (default $KUBECONFIG, else in-cluster)")
	if err := fs.Parse(args); err != nil {
		return exitInvalid
	}
	if *namespace == "" || *name == "" || *payload == "" {
		return fail(stderr, exitInvalid, "publish: --namespace, --name and --payload are required")
	}
	raw, err := readInput(*payload, diff.MaxPayloadSize)
	if err != nil {
		return fail(stderr, exitInvalid, "publish: %v", err)
	}
	if _, err := diff.Decode(raw); err != nil {
		return fail(stderr, exitInvalid, "publish: %s: %v", *payload, err)
	}
	var rulesRaw []byte
	if *rules != "" {
		if rulesRaw, err = readInput(*rules, allowlist.MaxRulesSize); err != nil {
			return fail(stderr, exitInvalid, "publish: %v", err)
		}
	}
	if _, err := publish.Data(raw, rulesRaw, *hash); err != nil {
		return fail(stderr, exitInvalid, "publish: %v", err)
	}
	client, err := kubeClient(*kubeconfig)
	if err != nil {
		return fail(stderr, exitInvalid, "publish: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := publish.Publish(ctx, client, *namespace, *name, raw, rulesRaw, *hash)
	if err != nil {
		return fail(stderr, exitFailed, "publish: %v", err)
	}
	fmt.Fprintf(stdout, "published %s to ConfigMap %s/%s\n", h, *namespace, *name)
	return exitOK
}
