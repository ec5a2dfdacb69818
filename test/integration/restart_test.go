package integration

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/test/kubetest"
)

// The kube-apiserver killed at a handover of a paced pool (the first holders just Done, the next
// nodes about to take their slots) and started again a few seconds later: every watch each agent
// opens (its ConfigMap, its Node, the pool's order Lease and its queue's slot Lease, a followed
// holder's Node) retries at the agents' short backoff while it is down and is back within about a
// second of the server's return (not
// client-go's default reflector backoff, 800 ms doubling to 30 s, which left the slot Lease watch
// 4-45 s behind with every slot free), and the pool completes, never more than its slots at once.
func TestPacedPoolRecoversFromAnAPIServerRestartAtAHandover(t *testing.T) {
	for _, slots := range []int{1, 2} {
		t.Run(fmt.Sprintf("max-concurrent-%d", slots), func(t *testing.T) {
			const size, down = 5, 5 * time.Second
			ns, pool := fmt.Sprintf("refresh-restart-%d", slots), fmt.Sprintf("restart%d", slots)
			e := pacedPool(t, ns, pool, size, slots, 30*time.Second)
			kubeSrv := requireKube(t)
			ctx := context.Background()
			require.True(t, kubetest.WaitFor(ctx, 60*time.Second, e.all("v1", api.StateDone)), "all Done v1")
			time.Sleep(time.Second) // the agents' watches are up

			e.pub(base().File(registries, []byte("# v2 mirrors"), 0o644), "v2")
			doneV2 := func(s wireStatus) bool { return s.Current == "v2" && s.State == api.StateDone }
			require.True(t, kubetest.WaitFor(ctx, 60*time.Second, func() bool { return e.pw.count(doneV2) >= 1 }), "a first node Done")
			kubeSrv.StopAPIServer()
			stopped := time.Now()
			time.Sleep(down)
			require.NoError(t, kubeSrv.StartAPIServer())
			ready := time.Now()
			t.Logf("down %s, ready %s after the kill; %d of %d Done v2 by then", down, ready.Sub(stopped).Round(time.Millisecond), e.pw.count(doneV2), size)

			// The pool watch broke with the server: a new one, and the Nodes as they are now.
			e.pw = watchPool(t, e.admin, pool)
			require.True(t, kubetest.WaitFor(ctx, 60*time.Second, func() bool {
				l, err := e.admin.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: api.LabelNodePool + "=" + pool})
				if err != nil {
					return false
				}
				n := 0
				for _, node := range l.Items {
					if node.Annotations[api.AnnotationCurrent] == "v2" && node.Annotations[api.AnnotationState] == api.StateDone {
						n++
					}
				}
				return n == size
			}), "all Done v2 after the restart")
			t.Logf("all Done %s after the server was ready", time.Since(ready).Round(time.Millisecond))
			for _, n := range e.nodes {
				assert.Equal(t, "# v2 mirrors", read(t, n.root, registries), n.name)
			}
			assert.LessOrEqual(t, e.pw.maxWorking, slots, "nodes refreshing at once after the restart")

			// Every agent's watches came back soon after the server did: its first watch of each
			// resource after the kill began within the agents' longest retry delay (1.2 s) of the
			// server being ready, with a second's slack for a loaded machine.
			time.Sleep(time.Until(ready.Add(2500 * time.Millisecond))) // every watch that comes in time is in the log
			ev, err := kubeSrv.Audit()
			require.NoError(t, err)
			first := map[string]time.Time{} // agent, resource and object watched → its first watch after the kill
			for _, a := range ev {
				if a.Verb != "watch" || a.Received.Before(stopped) {
					continue
				}
				key := a.UserAgent + " " + a.ObjectRef.Resource + " " + watchedName(a.RequestURI)
				if _, ok := first[key]; !ok {
					first[key] = a.Received
				}
			}
			// Each agent watches the pool's order Lease and its own queue's slot by name (node k of
			// the sorted order refreshes in slot k mod slots).
			var names []string
			for _, n := range e.nodes {
				names = append(names, n.name)
			}
			sort.Strings(names)
			place := map[string]int{}
			for i, name := range names {
				place[name] = i
			}
			for _, n := range e.nodes {
				for _, k := range []string{"configmaps " + api.ConfigMapName("", pool), "leases " + api.OrderName(pool),
					"leases " + api.SlotName(pool, place[n.name]%slots), "nodes " + n.name} {
					k = "refresh-agent/" + n.name + " " + k
					at, ok := first[k]
					if !assert.True(t, ok, "no watch %q after the restart (watches: %v)", k, first) {
						continue
					}
					assert.True(t, at.Before(ready.Add(2200*time.Millisecond)), "watch %q back %s after the server was ready", k, at.Sub(ready))
				}
			}
		})
	}
}

// watchedName is what a watch selects: its field selector's name, else its label selector.
func watchedName(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return uri
	}
	q := u.Query()
	if f := q.Get("fieldSelector"); strings.HasPrefix(f, "metadata.name=") {
		return strings.TrimPrefix(f, "metadata.name=")
	}
	return q.Get("labelSelector")
}
