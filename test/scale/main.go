// Command scale runs a pool of refresh-agent processes (one per simulated node, each with its own
// temp root, --systemd none, --cri-socket none) against a real kube-apiserver with its audit log,
// and writes the fleet figures into docs/performance.md (between the scale markers): publish → all
// Done unpaced and paced, API requests per node per refresh and per minute while idle, start-up
// patches, RSS, and halting on a payload whose reload fails. `make bench` runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/diff"
	kubeclient "github.com/openshift/refresh-agent/kube"
	"github.com/openshift/refresh-agent/publish"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/kubetest"
	"github.com/openshift/refresh-agent/test/memcg"
)

const (
	ns         = "refresh-agent"
	registries = "/etc/containers/registries.conf"
)

func main() {
	bin := flag.String("bin", "bin/refresh-agent", "the agent binary")
	testBin := flag.String("test-bin", "bin/refresh-agent-test", "the agent built with -tags refreshtest (failing units)")
	nodes := flag.Int("nodes", 100, "simulated nodes")
	idle := flag.Duration("idle", 150*time.Second, "idle window (past the Go runtime's forced GC every 2 minutes, whose stack scans bring back code pages)")
	out := flag.String("out", "docs/performance.md", "the document whose scale section is replaced")
	model := flag.String("model", "1000,5000", "pool sizes of the in-process pacing model (package pacing against a simulated API), comma-separated; empty for none")
	modelOnly := flag.Bool("model-only", false, "run only the model and print its rows (no API server, no document written)")
	rowsFrom := flag.String("rows-from", "", "a file of table rows to add (a -model-only run's output, run apart so as not to load the machine under the agents)")
	flag.Parse()
	var modelRows []string
	for _, f := range strings.Split(*model, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		size, err := strconv.Atoi(f)
		if err != nil {
			fail(fmt.Errorf("-model %q: %w", f, err))
		}
		fmt.Fprintf(os.Stderr, "scale: model: %d nodes\n", size)
		r, err := modelRun(size, "10%", 100*time.Millisecond)
		if err != nil {
			fail(err)
		}
		modelRows = append(modelRows, r...)
	}
	if *modelOnly {
		fmt.Println(strings.Join(modelRows, "\n"))
		return
	}

	loadStart := loadAverage()
	h, err := newHarness()
	if err != nil {
		fail(err)
	}
	defer h.kube.Stop()
	defer h.cleanup()
	var rows []string
	add := func(r []string, err error) {
		if err != nil {
			h.stopAll()
			h.kube.Stop()
			h.cleanup()
			fail(err)
		}
		rows = append(rows, r...)
	}
	add(h.fleetRun("scale-unpaced", *bin, *nodes, "0", *idle))
	add(h.fleetRun("scale-paced", *bin, *nodes, "10%", 0))
	add(h.haltRun("scale-halt", *testBin, 5, "2"))
	add(h.stallRun("scale-stall", *bin, *testBin, *nodes, "2"))
	rows = append(rows, modelRows...)
	if *rowsFrom != "" { // read now: it may have been written while the agents ran
		b, err := os.ReadFile(*rowsFrom)
		if err != nil {
			fail(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "| ") {
				rows = append(rows, line)
			}
		}
	}
	table := "| figure | measured | goal | met |\n|---|---|---|---|\n" + strings.Join(rows, "\n") + "\n"
	fmt.Print(table)
	section := fmt.Sprintf("%s\n## Fleet pacing at %d nodes\n\nMeasured by `make bench` (`go run ./test/scale`) on %s: %d agent processes "+
		"(`refresh-agent run --systemd none --cri-socket none`, each with its own temp root) against one real kube-apiserver "+
		"and etcd on the same 2-core machine; requests counted from the API server's audit log (the agents' user), watches apart. "+
		"Each refresh changes one file (registries.conf). The machine's load average (1 min) was %s at the start of the run and %s at its end "+
		"(the machine is shared). The model's rows come from `go run ./test/scale -model-only -model 1000,5000` run apart "+
		"(`-rows-from`), so as not to load the machine under the agents.\n\n%s\n%s\n%s\n",
		beginMark, *nodes, time.Now().UTC().Format("2006-01-02"), *nodes, loadStart, loadAverage(), table, reading+"\n"+watchReading, endMark)
	if err := writeSection(*out, section); err != nil {
		h.kube.Stop()
		fail(err)
	}
}

// reading explains the request counts of a paced refresh.
const reading = `How a paced refresh spends its requests (per node): a Working patch (the refresh, or
"waiting for a refresh slot (N/M in use)" for a node that must wait; a waiting node that takes its
slot keeps showing Working and patches its refresh's reason only if the refresh lasts over a second),
the Done patch and the applied Event, as unpaced; and its slot taken, the +1: a Lease create for
the first node of each slot's queue, an update after (its watches of the order Lease and of its
queue's slot open with no list: client-go's watch-list streams their first state). The pool's
order costs one list of the pool's node names and one Lease write per new content, by the one node
whose turn it is to write it (the others wait for it, a delay fixed by their name; a few list
too when the order reaches them late, as on a loaded machine). A node takes its slot over from the node before it
in its queue as soon as that node's Done is on its Node (it follows that one Node with a watch, no
list), so there is no release in between and no race for the slot: only the last node of each queue
releases (an update, m per content). A node that failed keeps its slot and renews it every
--slot-ttl/3 (the only requests a halted pool makes). "Most nodes refreshing at once" counts Nodes
showing Working without the waiting reason: a waiting node that took its slot goes on showing its
waiting reason for up to a second, so the count can be below the slots in use. The unpaced figures
are sensitive to the machine's load: 100 agents, the API server, etcd and the harness share 2 cores.
`

// watchReading explains the watch-event rows and the model's.
const watchReading = `Watch events (issue 26 item 6): an agent of a paced pool watches the pool's order Lease and its
own queue's slot Lease, each by name (a field selector), and all of the pool's Leases only while it
waits with its queue stalled by a failure, or outside the order (docs/pacing.md). Before, every
agent watched all of the pool's Leases, so every Lease write reached every agent: about 1.1 x the
pool's size Lease events per node per refresh (127 per node at 100 nodes against the real API
server, 1,388 in the model at 1,000, where the model took 342 s to get through the fan-out; 5,000
was out of reach). Now a node gets the writes of its own queue's slot (one take per node of the
queue, its last node's release) and of the order: about the queue's length (10 at 10%) and a few,
the same at 1,000 and 5,000 nodes. The 100-node rows count the events from the API server's
apiserver_watch_events_total (the harness's own watch of the pool's Nodes included, about 1 event
per Node patch). The model runs package pacing itself: one Pacer per node in one process, its Lease
and Node watches served by a simulated API that delivers every write to every watcher whose
selector (label, or name) matches, on the watcher's own goroutine, with resourceVersions and
conflicts; a watch that opens costs no request (client-go's watch-list streams the Leases as they
are as the watch's first events, counted as events), node lists cost one request per 500 nodes
(kube.NodeNames' pages), each refresh takes 100 ms, --spread 500ms, and all
the pool's Pacers share this machine's 2 cores, which is what bounds its completion time. Its
first refresh is the pool's first ever (no order Lease yet, and each agent opens its slot watch);
the next one is any refresh after (the watches stay open, and the order's writer is chosen over a
window of a millisecond per node of the last order, so that few nodes list the pool).
`

const (
	beginMark = "<!-- scale: begin (test/scale writes this section) -->"
	endMark   = "<!-- scale: end -->"
)

// writeSection replaces the scale section of file, or appends it.
func writeSection(file, section string) error {
	b, _ := os.ReadFile(file)
	doc := string(b)
	if i, j := strings.Index(doc, beginMark), strings.Index(doc, endMark); i >= 0 && j > i {
		doc = doc[:i] + strings.TrimSuffix(section, "\n") + doc[j+len(endMark):]
	} else {
		doc = strings.TrimRight(doc, "\n") + "\n\n" + section
	}
	return os.WriteFile(file, []byte(doc), 0o644)
}

// loadAverage is the machine's 1-minute load average.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Fields(string(b))[0]
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "scale:", err)
	os.Exit(1)
}

type harness struct {
	kube      *kubetest.Server
	admin     kubernetes.Interface
	publisher *kubeclient.Client
	kc        string
	mu        sync.Mutex
	procs     []*exec.Cmd
	roots     []string
	// inCgroups starts each agent in a memory cgroup of its own (the idle run: its working set, as
	// the kubelet sees it); cgroups are those cgroups by agent pid.
	inCgroups bool
	cgroups   map[int]*memcg.Cgroup
}

// cleanup removes the nodes' temp roots and the agents' cgroups.
func (h *harness) cleanup() {
	for _, r := range h.roots {
		_ = os.RemoveAll(r)
	}
	for pid, cg := range h.cgroups {
		cg.Remove()
		delete(h.cgroups, pid)
	}
}

func newHarness() (*harness, error) {
	k, err := kubetest.Start()
	if err != nil {
		return nil, err
	}
	admin, err := kubernetes.NewForConfig(k.Config(kubetest.AdminUser))
	if err != nil {
		return nil, err
	}
	pub, err := kubeclient.New(k.Config(kubetest.AdminUser))
	if err != nil {
		return nil, err
	}
	kc, err := k.Kubeconfig(kubetest.AgentUser)
	if err != nil {
		return nil, err
	}
	return &harness{kube: k, admin: admin, publisher: pub, kc: kc}, nil
}

func base(registriesContent string) *fixture.Config {
	return fixture.Ignition("3.2.0").EmbedMachine(fixture.DefaultMachine()).
		File(registries, []byte(registriesContent), 0o644).
		File("/var/lib/kubelet/config.json", []byte(`{"auths":{}}`), 0o600)
}

// pool creates n nodes of pool: a temp root seeded with the v0 payload, and a Node that says Done v0.
func (h *harness) pool(pool string, n int) ([]string, []string, error) {
	ctx := context.Background()
	empty, err := diff.Decode(fixture.Ignition("3.2.0").EmbedMachine(fixture.DefaultMachine()).JSON())
	if err != nil {
		return nil, nil, err
	}
	v0 := base("# v0 mirrors").JSON()
	if _, err := publish.Publish(ctx, h.publisher, ns, api.ConfigMapName("", pool), v0, nil, "v0"); err != nil {
		return nil, nil, err
	}
	var names, roots []string
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%s-%03d", pool, i)
		dir, err := os.MkdirTemp("", "scale-root-")
		if err != nil {
			return nil, nil, err
		}
		if err := fixture.NodeRoot(dir); err != nil {
			return nil, nil, err
		}
		root, err := actions.OpenRoot(dir)
		if err != nil {
			return nil, nil, err
		}
		_, err = apply.Run(ctx, apply.Host{Root: root, StateDir: filepath.Join(dir, "var/lib/refresh-agent"), Units: actions.NoUnits{}},
			apply.Request{Desired: v0, Hash: "v0", Current: empty})
		root.Close()
		if err != nil {
			return nil, nil, err
		}
		_, err = h.admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels:      map[string]string{api.LabelNodePool: pool},
			Annotations: map[string]string{api.AnnotationCurrent: "v0", api.AnnotationDesired: "v0", api.AnnotationState: api.StateDone}}}, metav1.CreateOptions{})
		if err != nil {
			return nil, nil, err
		}
		names, roots = append(names, name), append(roots, dir)
		h.roots = append(h.roots, dir)
	}
	return names, roots, nil
}

// start runs one agent per node.
func (h *harness) start(bin string, names, roots []string, systemd string, extra ...string) ([]*exec.Cmd, error) {
	logDir := filepath.Join(os.TempDir(), "refresh-agent-scale-logs")
	_ = os.MkdirAll(logDir, 0o755)
	var cmds []*exec.Cmd
	for i, name := range names {
		args := append([]string{"run", "--node-name", name, "--root", roots[i], "--source", "api", "--namespace", ns,
			"--systemd", systemd, "--cri-socket", "none", "--kubeconfig", h.kc, "--metrics-addr", "", "--health-addr", "", "--drift", "off"}, extra...)
		cmd := exec.Command(bin, args...)
		var cg *memcg.Cgroup
		if h.inCgroups {
			var err error
			if cg, err = memcg.New("scale-" + name); err != nil {
				return nil, fmt.Errorf("a memory cgroup for %s: %w", name, err)
			}
			cmd = cg.Command(bin, args...)
		}
		logf, err := os.Create(filepath.Join(logDir, name+".log"))
		if err != nil {
			return nil, err
		}
		cmd.Stderr = logf
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		if cg != nil {
			if h.cgroups == nil {
				h.cgroups = map[int]*memcg.Cgroup{}
			}
			h.cgroups[cmd.Process.Pid] = cg
		}
		cmds = append(cmds, cmd)
	}
	h.mu.Lock()
	h.procs = append(h.procs, cmds...)
	h.mu.Unlock()
	return cmds, nil
}

func stop(cmds []*exec.Cmd) {
	for _, c := range cmds {
		_ = c.Process.Signal(syscall.SIGTERM)
	}
	for _, c := range cmds {
		_ = c.Wait()
	}
}

func (h *harness) stopAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.procs {
		_ = c.Process.Kill()
	}
}

// poolWatch follows the pool's Nodes: the most refreshing at once (Working, not waiting) and
// whether all say state for hash.
type poolWatch struct {
	mu         sync.Mutex
	states     map[string]api.NodeStatus
	maxWorking int
	waited     map[string]bool // nodes seen waiting for a slot
	refreshed  map[string]bool // nodes seen Working with a slot
	cancel     context.CancelFunc
	changed    chan struct{} // a Node changed
	events     int           // Node watch events received (the harness's own, apart from the agents')
}

func (h *harness) watchPool(pool string) (*poolWatch, error) {
	ctx, cancel := context.WithCancel(context.Background())
	pw := &poolWatch{states: map[string]api.NodeStatus{}, waited: map[string]bool{}, refreshed: map[string]bool{}, cancel: cancel, changed: make(chan struct{}, 1)}
	watchOnce := func() (watch.Interface, error) {
		return h.admin.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{LabelSelector: api.LabelNodePool + "=" + pool})
	}
	w, err := watchOnce()
	if err != nil {
		cancel()
		return nil, err
	}
	go func() {
		// A watch the server ends (timeout, a slow consumer under load) starts again: its first
		// events are the Nodes as they are.
		for ctx.Err() == nil {
			for ev := range w.ResultChan() {
				n, ok := ev.Object.(*corev1.Node)
				if !ok || ev.Type == watch.Deleted {
					continue
				}
				pw.observe(n)
			}
			for ctx.Err() == nil {
				if w, err = watchOnce(); err == nil {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	}()
	return pw, nil
}

func (pw *poolWatch) observe(n *corev1.Node) {
	s := api.FromAnnotations(n.Annotations)
	pw.mu.Lock()
	defer pw.mu.Unlock()
	pw.events++
	pw.states[n.Name] = s
	if s.Waiting != nil {
		pw.waited[n.Name] = true
	} else if s.State == api.StateWorking {
		pw.refreshed[n.Name] = true
	}
	working := 0
	for _, s := range pw.states {
		if s.Refreshing() {
			working++
		}
	}
	pw.maxWorking = max(pw.maxWorking, working)
	select {
	case pw.changed <- struct{}{}:
	default:
	}
}

func (pw *poolWatch) count(f func(api.NodeStatus) bool) int {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	n := 0
	for _, s := range pw.states {
		if f(s) {
			n++
		}
	}
	return n
}

// isState, doneAt and haltedBy are the pool's Nodes' states the harness waits for and counts.
func isState(state string) func(api.NodeStatus) bool {
	return func(s api.NodeStatus) bool { return s.State == state }
}

func doneAt(hash string) func(api.NodeStatus) bool {
	return func(s api.NodeStatus) bool { return s.Current == hash && s.State == api.StateDone }
}

// haltedBy: waiting for a slot in a pool halted by failed nodes.
func haltedBy(failed int) func(api.NodeStatus) bool {
	return func(s api.NodeStatus) bool {
		return s.State == api.StateWorking && s.Waiting != nil && s.Waiting.Halted && s.Waiting.Failed == failed
	}
}

func (pw *poolWatch) eventCount() int {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	return pw.events
}

func (pw *poolWatch) reset() {
	pw.mu.Lock()
	pw.maxWorking, pw.waited, pw.refreshed = 0, map[string]bool{}, map[string]bool{}
	pw.mu.Unlock()
}

// waitAll waits until n of the pool's Nodes match, as the pool's watch shows them (so that the
// harness does not load the API server it measures with lists), with a list every second in case
// the watch dropped an event.
func (h *harness) waitAll(pw *poolWatch, pool string, n int, timeout time.Duration, f func(api.NodeStatus) bool) bool {
	deadline := time.After(timeout)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for pw.count(f) != n {
		select {
		case <-pw.changed:
		case <-tick.C:
			if h.listAll(pool, n, 0, f) {
				return true
			}
		case <-deadline:
			return false
		}
	}
	return true
}

// listAll polls the pool's Nodes with a list until n match.
func (h *harness) listAll(pool string, n int, timeout time.Duration, f func(api.NodeStatus) bool) bool {
	ctx := context.Background()
	return kubetest.WaitFor(ctx, timeout, func() bool {
		l, err := h.admin.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: api.LabelNodePool + "=" + pool})
		if err != nil {
			return false
		}
		c := 0
		for _, node := range l.Items {
			if f(api.FromAnnotations(node.Annotations)) {
				c++
			}
		}
		return c == n
	})
}

// requests counts the agents' audit events after from, watches apart, by "verb resource".
func (h *harness) requests(from int) (int, map[string]int, int, error) {
	ev, err := h.kube.Audit()
	if err != nil {
		return 0, nil, 0, err
	}
	by := map[string]int{}
	total := 0
	for _, e := range ev[from:] {
		if e.Verb == "watch" {
			continue
		}
		by[e.Verb+" "+e.ObjectRef.Resource]++
		total++
	}
	return total, by, len(ev), nil
}

func (h *harness) auditLen() int {
	ev, _ := h.kube.Audit()
	return len(ev)
}

func breakdown(by map[string]int, n int) string {
	var keys []string
	for k := range by {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.2f", k, float64(by[k])/float64(n)))
	}
	return strings.Join(parts, ", ")
}

// cpuTimes is each agent's user+system CPU time so far.
func cpuTimes(cmds []*exec.Cmd) []time.Duration {
	var out []time.Duration
	for _, c := range cmds {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.Process.Pid))
		if err != nil {
			out = append(out, 0)
			continue
		}
		// The fields after the command name (which may hold spaces) start after its ')'.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		var ut, st int64
		if len(f) > 12 {
			fmt.Sscan(f[11], &ut)
			fmt.Sscan(f[12], &st)
		}
		out = append(out, time.Duration(ut+st)*time.Second/100) // clock ticks (USER_HZ 100)
	}
	return out
}

// cpuSpent describes the CPU time each agent spent between two cpuTimes.
func cpuSpent(before, after []time.Duration) string {
	var d []time.Duration
	var sum time.Duration
	for i := range after {
		if i < len(before) {
			d = append(d, after[i]-before[i])
			sum += after[i] - before[i]
		}
	}
	if len(d) == 0 {
		return "-"
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return fmt.Sprintf("per agent median %d ms, max %d ms; summed %d ms", d[len(d)/2].Milliseconds(), d[len(d)-1].Milliseconds(), sum.Milliseconds())
}

func rss(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, "VmRSS:")), "%f", &kb)
			return kb / 1024
		}
	}
	return 0
}

// median of xs (sorted in place).
func median(xs []float64) float64 {
	sort.Float64s(xs)
	return xs[len(xs)/2]
}

func yes(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

func row(figure, measured, goal string, ok bool) string {
	return fmt.Sprintf("| %s | %s | %s | %s |", figure, measured, goal, yes(ok))
}

// startUp starts the agents and waits until each watches its ConfigMap, then a little more.
func (h *harness) startUp(bin string, names, roots []string, systemd string, extra ...string) ([]*exec.Cmd, int, error) {
	a0 := h.auditLen()
	cmds, err := h.start(bin, names, roots, systemd, extra...)
	if err != nil {
		return nil, 0, err
	}
	ok := kubetest.WaitFor(context.Background(), 180*time.Second, func() bool {
		ev, err := h.kube.Audit()
		if err != nil {
			return false
		}
		w := 0
		for _, e := range ev[a0:] {
			if e.Verb == "watch" && e.ObjectRef.Resource == "configmaps" {
				w++
			}
		}
		return w >= len(names)
	})
	if !ok {
		return cmds, 0, fmt.Errorf("the agents did not all start within 180s")
	}
	time.Sleep(5 * time.Second)
	_, by, _, err := h.requests(a0)
	if err != nil {
		return cmds, 0, err
	}
	return cmds, by["patch nodes"], nil
}

// fleetRun: n agents of one pool at limit; start-up, idle (when idle > 0), one refresh.
func (h *harness) fleetRun(pool, bin string, n int, limit string, idle time.Duration) ([]string, error) {
	names, roots, err := h.pool(pool, n)
	if err != nil {
		return nil, err
	}
	pw, err := h.watchPool(pool)
	if err != nil {
		return nil, err
	}
	defer pw.cancel()
	label := "unpaced"
	if limit != "0" {
		label = "--max-concurrent " + limit
	}
	fmt.Fprintf(os.Stderr, "scale: starting %d agents (%s)\n", n, label)
	if idle > 0 {
		// Each agent in a memory cgroup of its own, started with the page cache dropped, as the
		// bench runs its idle agent: the working set is what the kubelet sees.
		h.inCgroups = memcg.DropPageCache() == nil
		defer func() { h.inCgroups = false }()
	}
	cmds, patches, err := h.startUp(bin, names, roots, "none", "--max-concurrent", limit)
	h.inCgroups = false
	defer stop(cmds)
	if err != nil {
		return nil, err
	}
	var rows []string
	if idle > 0 {
		rows = append(rows, row(fmt.Sprintf("node patches per agent at start-up (%d agents, Nodes already Done)", n),
			fmt.Sprintf("%.2f", float64(patches)/float64(n)), "≤ 1", patches <= n))
		a1 := h.auditLen()
		fmt.Fprintf(os.Stderr, "scale: idle for %s\n", idle)
		time.Sleep(idle)
		reqs, by, _, err := h.requests(a1)
		if err != nil {
			return nil, err
		}
		perMin := float64(reqs) / float64(n) / idle.Minutes()
		var rs []float64
		sum := 0.0
		for _, c := range cmds {
			r := rss(c.Process.Pid)
			rs = append(rs, r)
			sum += r
		}
		sort.Float64s(rs)
		wsRow := row(fmt.Sprintf("agent working set while idle, %d agents (each in a memory cgroup of its own, page cache dropped first: usage − inactive file, as the kubelet reads it)", n),
			"unmeasured: no memory cgroup (needs root)", "≤ 25 MiB per agent", false)
		var ws, usage, inactive []float64
		var most memcg.Stat
		for _, c := range cmds {
			if cg := h.cgroups[c.Process.Pid]; cg != nil {
				if st, err := cg.Stat(); err == nil {
					ws, usage, inactive = append(ws, st.WorkingSet), append(usage, st.Usage), append(inactive, st.InactiveFile)
					if st.WorkingSet > most.WorkingSet {
						most = st
					}
				}
			}
		}
		if len(ws) == n {
			wsSum := 0.0
			for _, w := range ws {
				wsSum += w
			}
			// The agents share one executable: its page cache is charged to one cgroup at most (the
			// one that read each page first), and inactive file pages are not in the working set.
			wsRow = row(fmt.Sprintf("agent working set while idle, %d agents (each in a memory cgroup of its own, page cache dropped first: usage − inactive file, as the kubelet reads it)", n),
				fmt.Sprintf("per agent median %.1f MiB (usage %.1f, inactive file %.1f), max %.1f MiB (usage %.1f, inactive file %.1f); summed %.0f MiB",
					median(ws), median(usage), median(inactive), most.WorkingSet, most.Usage, most.InactiveFile, wsSum),
				"≤ 25 MiB per agent", slices.Max(ws) <= 25)
		}
		rows = append(rows,
			row(fmt.Sprintf("API requests per node per minute while idle (%s window, %d agents)", idle, n),
				fmt.Sprintf("%.2f %s", perMin, breakdown(by, n)), "0 besides the watches", reqs == 0),
			row(fmt.Sprintf("agent RSS while idle, %d agents", n),
				fmt.Sprintf("per agent median %.1f MiB, max %.1f MiB; summed %.0f MiB", rs[len(rs)/2], rs[len(rs)-1], sum),
				"— (reported beside the working set: the kubelet sees the working set)", true),
			wsRow)
	}
	pw.reset()
	a2 := h.auditLen()
	w0, _ := h.watchEvents()
	pe0 := pw.eventCount()
	cpu0 := cpuTimes(cmds)
	start := time.Now()
	if _, err := publish.Publish(context.Background(), h.publisher, ns, api.ConfigMapName("", pool), base("# v1 mirrors").JSON(), nil, "v1"); err != nil {
		return nil, err
	}
	if !h.waitAll(pw, pool, n, 300*time.Second, doneAt("v1")) {
		return nil, fmt.Errorf("%s: not all %d nodes Done within 300s", label, n)
	}
	elapsed := time.Since(start)
	cpu1 := cpuTimes(cmds)
	time.Sleep(3 * time.Second) // the last Events and slot releases
	reqs, by, _, err := h.requests(a2)
	if err != nil {
		return nil, err
	}
	perNode := float64(reqs) / float64(n)
	w1, werr := h.watchEvents()
	harness := float64(pw.eventCount()-pe0) / float64(n)
	watchRow := func(label string, queue int) string {
		if werr != nil {
			return row("watch events delivered per node per refresh, "+label, "unmeasured: "+werr.Error(), "≤ a small constant", false)
		}
		total, parts := 0.0, []string{}
		d := map[string]float64{}
		for _, r := range []string{"leases", "nodes", "configmaps"} {
			d[r] = (w1[r] - w0[r]) / float64(n)
			if r == "nodes" {
				d[r] -= harness
			}
			total += d[r]
			parts = append(parts, fmt.Sprintf("%s %.1f", r, d[r]))
		}
		// The agents' Lease events are bounded by their queue's length (the pool's nodes per slot)
		// and a few; their Node events by their own Node's patches and the holder each follows.
		return row(fmt.Sprintf("watch events delivered to the agents per node per refresh, %s (the API server's apiserver_watch_events_total, less the %.1f per node of the harness's own watch of the pool's Nodes)", label, harness),
			fmt.Sprintf("%.1f (%s)", total, strings.Join(parts, ", ")),
			fmt.Sprintf("≤ a small constant whatever the pool's size: Leases ≤ the queue's length (%d) + 5, all ≤ the queue's length + 15", queue),
			d["leases"] <= float64(queue+5) && total <= float64(queue+15))
	}
	pw.mu.Lock()
	maxWorking, waited := pw.maxWorking, len(pw.waited)
	pw.mu.Unlock()
	if limit == "0" {
		rows = append(rows,
			row(fmt.Sprintf("publish → all %d Done, unpaced", n), fmt.Sprintf("%.2f s", elapsed.Seconds()), "≤ 2 s", elapsed <= 2*time.Second),
			row("API requests per node per refresh, unpaced", fmt.Sprintf("%.2f (%s)", perNode, breakdown(by, n)), "≤ 3", perNode <= 3.0),
			row("agent CPU time per refresh, unpaced (publish → all Done)", cpuSpent(cpu0, cpu1), "— (measured)", true),
			watchRow("unpaced", 0))
		return rows, nil
	}
	slots := n / 10
	rows = append(rows,
		row(fmt.Sprintf("publish → all %d Done, %s (%d slots, --spread 2s)", n, label, slots), fmt.Sprintf("%.2f s", elapsed.Seconds()), "— (paced)", true),
		row(fmt.Sprintf("most nodes refreshing at once (Working with a slot), %s", label), fmt.Sprintf("%d; %d nodes reported waiting for a slot", maxWorking, waited),
			fmt.Sprintf("≤ %d", slots), maxWorking <= slots),
		row(fmt.Sprintf("API requests per node per refresh, %s", label), fmt.Sprintf("%.2f (%s)", perNode, breakdown(by, n)), "≤ 5 (3 + 2)", perNode <= 5.0),
		watchRow(label, n/slots))
	return rows, nil
}

// haltRun: n nodes whose reload fails on the payload (test build, --systemd test-marker) at limit;
// then the fix.
func (h *harness) haltRun(pool, bin string, n int, limit string) ([]string, error) {
	names, roots, err := h.pool(pool, n)
	if err != nil {
		return nil, err
	}
	pw, err := h.watchPool(pool)
	if err != nil {
		return nil, err
	}
	defer pw.cancel()
	fmt.Fprintf(os.Stderr, "scale: halting: %d agents, --max-concurrent %s\n", n, limit)
	cmds, _, err := h.startUp(bin, names, roots, "test-marker", "--max-concurrent", limit, "--max-attempts", "1", "--spread", "500ms")
	defer stop(cmds)
	if err != nil {
		return nil, err
	}
	slots := 2
	pw.reset()
	if _, err := publish.Publish(context.Background(), h.publisher, ns, api.ConfigMapName("", pool), base("# v1 "+fixture.FailMarker).JSON(), nil, "v1"); err != nil {
		return nil, err
	}
	haltedReason := fmt.Sprintf("halted: %d nodes failed", slots)
	ok := kubetest.WaitFor(context.Background(), 120*time.Second, func() bool {
		return pw.count(isState(api.StateDegraded)) == slots && pw.count(haltedBy(slots)) == n-slots
	})
	if !ok {
		return nil, fmt.Errorf("the pool did not halt")
	}
	time.Sleep(5 * time.Second) // and stays halted
	pw.mu.Lock()
	touched := len(pw.refreshed)
	pw.mu.Unlock()
	degraded := pw.count(isState(api.StateDegraded))
	waiting := pw.count(haltedBy(slots))
	start := time.Now()
	if _, err := publish.Publish(context.Background(), h.publisher, ns, api.ConfigMapName("", pool), base("# v2 mirrors").JSON(), nil, "v2"); err != nil {
		return nil, err
	}
	done := h.waitAll(pw, pool, n, 120*time.Second, doneAt("v2"))
	elapsed := time.Since(start)
	return []string{
		row(fmt.Sprintf("halting: %d nodes whose reload fails, --max-concurrent %s", n, limit),
			fmt.Sprintf("%d nodes touched (Degraded, rolled back, %d after 5 s more); %d waiting, reason \"…%s\"", touched, degraded, waiting, haltedReason),
			fmt.Sprintf("exactly %d touched, the rest wait", slots), touched == slots && degraded == slots && waiting == n-slots),
		row("halting: fix published → the pool completes", fmt.Sprintf("all %d Done in %.2f s", n, elapsed.Seconds()), "completes", done),
	}, nil
}
