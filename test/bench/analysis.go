package main

// analysis is appended to docs/performance.md: what the profiles showed, what was fixed, what remains.
const analysis = `
## Analysis

- **decode + diff + plan.** A CPU profile (` + "`go test ./plan -run '^$' -bench 'Plan/files=500$' -cpuprofile cpu.out`" + `)
  showed, besides the ` + "`encoding/json`" + ` work the baseline also does: (1) the form/version probe unmarshalling
  the whole payload twice before the real decode, and (2) Ignition's validation decoding every file's
  data URL, which also doubled the allocations and with them the GC time. Fixed: the probe streams the
  top-level keys and stops at ` + "`ignition`" + `; only file contents that differ from the current payload's are
  data-URL validated (` + "`diff.DecodeAgainst`" + `); unchanged files are compared by their source strings, never
  decoded. Ignition's own validation still runs on every payload, on purpose.
  The payloads are shaped as the machine-config server serves them: the content MachineConfig
  (` + "`/etc/mcs-machine-config-content.json`" + `, a ` + "`data:,`" + ` URL with RFC 2396 escapes, as the server's
  getEncodedContent writes it) embeds the whole rendered config again, and a refresh checks that copy
  against the outer config (a copy that disagrees is refused). That made the row 4.6-5.2x the baseline
  (at 500 files 139 MB allocated per op, for a 29 MB payload whose content file was then base64): the data URL parser (` + "`dataurl`" + `, which Ignition uses) lexes the
  data rune by rune through a channel (~0.5 s for the 18 MB content URL, twice: validation and read),
  the MachineConfig was unmarshalled twice (encoding/json, then case-sensitively as the MCO reads it)
  with its config copied, and the embedded config was decoded whole. Now: data URLs are decoded in
  one pass over a byte table, byte for byte and verdict for verdict as that parser (` + "`diff/dataurl.go`" + `,
  FuzzDataURL), and validation is spared lexing those it accepts; the MachineConfig's own fields are
  read from a copy without its config, whose place and syntax a walker as strict as encoding/json's
  scanner checks (` + "`diff/jsonwalk.go`" + `, FuzzWalker); and the embedded config is walked once at decode time,
  every file's contents source compared with the outer config's at the same path as it goes
  (` + "`diff/streamed.go`" + `): CheckEmbedded decodes only the config with each agreeing source replaced by a
  placeholder of a per-decode nonce (the paths, modes, owners, units, users, and whatever contents
  differ), puts the sources back where the placeholders decoded before contents are checked, and
  compares as before; anything the walk cannot settle is decoded whole, as before, and
  FuzzStreamedEmbedded holds the two paths to the same reason on mutated payloads. At 500 files the
  row went from 4.6x to the ratio in the table, and to 64 MB allocated per op for the 25 MB payload.
  Then (heap profile, ` + "`-memprofile`" + ` at 500 files, per op) the outer config's strings were a copy of the
  payload, as in the baseline (25 MB): encoding/json copies every source into its own string. Now the
  long sources (128 bytes or more, no JSON escape, valid UTF-8: every data URL a server writes) are
  not copied: the document is unmarshalled with each of them replaced by a placeholder of a
  per-decode nonce, and they are put back, as strings that share the payload's bytes, right after
  the unmarshal and before anything reads the config (translation, Ignition's validation, which sees
  them as before, the budget and hash checks; ` + "`diff/alias.go`" + `). Anything else, or an unmarshal
  error, is decoded whole as before, and FuzzAliasedSources holds the two decodes equal, error for
  error, on mutated payloads (the decoded payload therefore keeps the payload's bytes alive, and
  callers must not modify them: Decode says so). At 500 files: 64.5 MB to 39.7 MB allocated per op.
  **What remains** (same profile): Ignition's validation of the outer config and again of the
  embedded one (vcontext's reflection, ~10 KiB per file entry per validation: ~19 MB together, and
  most of the CPU), and the decoded MachineConfig (12 MB) the walk reads. Next steps, not done: the
  embedded copy's entries identical to the outer config's (already validated) need no second
  validation, which needs care, since the two are of different specs on a served payload (3.2.0
  outside, 3.5.0 inside: Ignition's file rules differ between them only in the URLs 3.4 added) and
  Ignition's cross-entry rules (duplicates, links, unit paths) must still see every entry; and the
  percent-encoded content URL walked in place rather than decoded (the server escapes every
  structural character and every byte a JSON string must escape, so the runs between escapes are
  plain string bytes).
- **apply** costs what a plain crash-safe writer costs: backups are hard links, the journal is a few
  small fsynced writes, and directory fsyncs are batched per directory. (fsync latency dominates both
  columns and is noisy on this disk.)
- **Idle memory as the kubelet sees it.** The kubelet, ` + "`oc adm top`" + ` and the OOM killer see the pod's
  memory cgroup: its working set, usage minus inactive file pages. The bench runs each agent in a
  memory cgroup of its own, started with the page cache dropped (as on a node that just pulled the
  image), and reports the working set beside RSS. Idle RSS was ~26 MiB, nearly all the executable's
  own pages (RssFile ~20 MiB): starting a Go binary runs every linked package's initialisation, and
  the kernel maps file pages with their neighbours. Package memory used to drop the executable's
  clean mappings from the process (madvise) once the agent was idle: RSS fell to ~17 MiB. Measured in
  the same run (` + "`go run ./test/bench -bin bin/refresh-agent -bin-beside <agent built without that release>`" + `,
  both agents idle 2m30s side by side, commit a3b8bca's -tags norelease build): working set 6.7 MiB
  with it (RSS 17.5, cgroup usage 35.6, inactive file 28.9), 6.7 MiB without it (RSS 27.2, usage 35.8,
  inactive file 29.1). The dropped pages stayed in the page cache, charged to the pod's cgroup as
  inactive file, which the working set never counted: it changed RSS, not the node's memory
  accounting, so package memory is **removed** with its caller; the agent still gives the heap's free
  pages back (debug.FreeOSMemory) 2 s after a refresh. Idle RSS is therefore ~10 MiB higher than
  before (clean, shared, reclaimable file pages); the working set, what the kubelet limits, is the
  row above. ` + "`-bin-beside`" + ` stays for the next such comparison.
- **Peak memory.** Three fixes took the 13.4 MiB payload's peak from 4.2x its size above idle to about
  2.7x: the agent returns a refresh's garbage to the OS when the refresh ends, decodes each file's
  contents only when it is staged, and runs with a low GC target. Payloads shaped as the server
  serves them (two copies of the config) then peaked at 5.9x (99 MiB for 15.8 MiB): the embedded
  copy was decoded whole; it no longer is (above): 3.3x. Measured on the 15.6 MiB payload with
  ` + "`go run ./test/bench -idle 5s -changes 1 -outages 0`" + ` (the peak rows only) and GODEBUG=gctrace=1,
  what a refresh held at once was the payload as read (kept for the record), its decoded config
  (as large again: Go strings are copies), the decoded content MachineConfig (8 MB) while the decode
  walks it, and kept after it (the embedded kernelArguments were a slice of it), the MachineConfig
  again for the machine-config daemon's current-config file from planning to the commit, and the
  GC's headroom (GOGC=25). Now the decoded config shares the payload's bytes (above), the
  kernelArguments are copied out, the daemon's record is checked when planned but produced again at
  staging time (one file at a time, as the other files), its check no longer copies spec.config, and
  the agent runs with GOGC=10 (unless GOGC is set; a small payload's refresh keeps 200): the
  heap is mostly payload bytes, which the GC does not scan, so the lower target costs little CPU.
  Peak working set, one run each: 60.2 MiB (3.52x) on main before, 42.3 MiB (2.35x) with the
  aliased sources, 40.1 MiB (2.20x) with the record and kernelArguments fixes, 35.4-37.4 MiB
  (1.88-2.04x, three runs) with GOGC=10 (GOGC=5: 1.80-1.88x). The table's row is from the full run. What a
  refresh still holds at its peak: the payload once (the agent's snapshot of its source, which the
  decoded config now shares), the decoded content MachineConfig while the decode walks it (8 MB,
  half the payload), and the GC's 10%: the margin to 2x is thin (about a tenth of the payload), and
  the in-place walk of the content URL (above) is what would widen it.
- **CPU per refresh across a pool.** 100 agents refreshing at once on 2 cores spent ~30 ms CPU
  each (~3 s summed), so the pool's last Done came at 2.1–2.9 s. A system profile (perf) showed the
  GC (the agent's GOGC=25 then) at ~15% of the agents' CPU, Ignition's translation of the 3.2 payloads
  (reflection) for both the desired and the recorded payload, the first decode in each process
  building encoding/json's type caches, and FreeOSMemory run before the Done patch. Now a payload
  under 1 MiB is refreshed with a GC target of 200 until the agent is idle again (a large payload
  keeps the process target, now 10, for its peak), the recorded payload stays decoded between refreshes (apply.Decoded,
  keyed by its content-addressed name), the agent decodes it once at start-up, and memory is
  given back 2 s after the outcome is reported: ~19 ms each, and the pool Done in ~1.7 s.
- **Agent.** The idle agent holds two watches (its ConfigMap and its Node, each by field selector;
  paced, also its pool's slot Leases), no resync, and sends nothing else: the API server's audit log counts its requests.
- **Outage pickup.** A payload published right after an API server outage of a minute took 18–26 s
  to arrive. The cause was client-go's reflector backoff: after a failed list or watch it waits
  800 ms doubling to a 30 s cap, with jitter 1.0 (so up to 60 s), and resets only after 2 minutes
  without failure. The client's rate limiter (QPS 20) was not involved: the same bench with an
  agent built with client-go's default backoff, and nothing else changed, measured p50 27.5 s,
  p99 78.4 s over 3 outages of 40 s. The agent's watches now run their own reflectors
  (` + "`agent/watch.go`" + `: one object each, no shared informer) with a 100 ms backoff doubling to a 1 s
  cap, jitter 0.2: while the server is down each watch retries about every 1–1.2 s, so the first
  retry after it is back comes within that.
`
