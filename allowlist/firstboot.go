package allowlist

// firstBootOnly are files the machine-config server adds to a payload for the node's first boot
// only. A refresh never writes them and never refuses a payload for them: the plan lists their
// changes as skipped, with the reason.
var firstBootOnly = map[string]string{
	// The bootstrap kubeconfig: kubelet uses it once to request its client certificate, then runs
	// on /var/lib/kubelet/kubeconfig. Rewriting it on a running node changes nothing, and its
	// bootstrap token may no longer be valid.
	"/etc/kubernetes/kubeconfig": "first boot only: the bootstrap kubeconfig is used once by kubelet to obtain its credentials",
}

// FirstBootOnly returns why a refresh skips path, or "" when it does not.
func FirstBootOnly(path string) string { return firstBootOnly[path] }
