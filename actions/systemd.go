package actions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	sd "github.com/coreos/go-systemd/v22/dbus"
	"github.com/godbus/dbus/v5"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/plan"
)

// Units runs a refresh's actions, one at a time, in the plan's order. Implementations: *Systemd
// (D-Bus), LazyUnits and NoUnits. Another kind of action joins by an implementation that dispatches on
// the action and runs it in the same order, forward and again on rollback (see RunAll).
type Units interface {
	Run(ctx context.Context, a plan.UnitAction) error
	Close()
}

// NoUnits runs nothing (--systemd none): every action is skipped, never reported as run.
type NoUnits struct{}

func (NoUnits) Run(context.Context, plan.UnitAction) error { return nil }
func (NoUnits) Close()                                     {}

// Skips reports that it runs nothing.
func (NoUnits) Skips() bool { return true }

// Skips reports whether u skips every action rather than running it (--systemd none).
func Skips(u Units) bool {
	s, ok := u.(interface{ Skips() bool })
	return ok && s.Skips()
}

// skipsAction reports whether u skips a rather than running it: per action when u dispatches
// several kinds (Runner), else as Skips.
func skipsAction(u Units, a plan.UnitAction) bool {
	if s, ok := u.(interface{ SkipsAction(plan.UnitAction) bool }); ok {
		return s.SkipsAction(a)
	}
	return Skips(u)
}

// Systemd runs unit actions over a private D-Bus connection to a systemd manager.
type Systemd struct {
	conn *sd.Conn
	// lost is closed when a bus connection drops (the manager exited or re-executed): a job's result
	// will then never arrive, and waiting for it would only run out the timeout.
	lost chan struct{}
	// JobTimeout bounds the wait for one job's result.
	JobTimeout time.Duration
}

// SystemSocket is the system manager's private socket, reached through the host's /run in the pod.
const SystemSocket = "/run/systemd/private"

// UserSocket is a user manager's private socket ($XDG_RUNTIME_DIR/systemd/private).
func UserSocket() string {
	return filepath.Join(os.Getenv("XDG_RUNTIME_DIR"), "systemd", "private")
}

// DialSystemd connects to the manager listening on socket (SystemSocket or UserSocket()).
func DialSystemd(ctx context.Context, socket string) (*Systemd, error) {
	lost := make(chan struct{})
	var once sync.Once
	conn, err := sd.NewConnection(func() (*dbus.Conn, error) {
		c, err := dbus.Dial("unix:path="+socket, dbus.WithContext(ctx))
		if err != nil {
			return nil, err
		}
		// The manager's private socket needs no Hello; authenticate as our uid without a name lookup.
		if err := c.Auth([]dbus.Auth{dbus.AuthExternal(strconv.Itoa(os.Getuid()))}); err != nil {
			c.Close()
			return nil, err
		}
		go func() { <-c.Context().Done(); once.Do(func() { close(lost) }) }()
		return c, nil
	})
	if err != nil {
		return nil, fmt.Errorf("systemd at %s: %w", socket, err)
	}
	return &Systemd{conn: conn, lost: lost, JobTimeout: 2 * time.Minute}, nil
}

// Close closes the connection.
func (s *Systemd) Close() { s.conn.Close() }

// Connected reports whether the connection is still up.
func (s *Systemd) Connected() bool {
	select {
	case <-s.lost:
		return false
	default:
		return s.conn.Connected()
	}
}

// Ping checks that the manager answers.
func (s *Systemd) Ping(ctx context.Context) error {
	_, err := s.conn.GetUnitPropertyContext(ctx, "-.mount", "Id")
	return err
}

// Run starts the job, waits for its result (which must be "done") and then requires the unit to be
// active. A DaemonReload (no unit) reloads the manager's unit files and returns when it is done.
func (s *Systemd) Run(ctx context.Context, a plan.UnitAction) error {
	// The last line: whatever reached here (a plan, a journal on disk), only a plain service that
	// neither reboots nor halts the node is ever acted on.
	if u, err := allowlist.NormalizeUnit(a.Unit); a.Action != allowlist.ActionDaemonReload && (err != nil || u != a.Unit) {
		return fmt.Errorf("%s %s: refused: not a unit the agent acts on (%v)", a.Action, a.Unit, err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.JobTimeout)
	defer cancel()
	if a.Action != allowlist.ActionDaemonReload {
		// What the unit is, as the manager reports it now (after any daemon-reload of this refresh).
		// A unit the manager has no file of is judged as before: the job itself says what becomes
		// of it (a rollback's disable of a unit whose file is gone again).
		if err := s.CheckUnit(ctx, a.Unit); err != nil && !errors.Is(err, ErrUnitNotFound) {
			return fmt.Errorf("%s %s: %w", a.Action, a.Unit, err)
		}
	}
	if allowlist.StateAction(a.Action) {
		return s.runState(ctx, a)
	}
	if a.IfLoaded {
		if gone, err := s.unloaded(ctx, a.Unit); err != nil || gone {
			if err == nil {
				// Gone again (added by the refresh) or masked again: it must not go on running
				// from the definition the rollback took away.
				err = s.stopIfActive(ctx, a.Unit)
			}
			return err
		}
	}
	if a.Action == allowlist.ActionDaemonReload {
		// Manager.Reload returns once the reload is complete.
		if err := s.conn.ReloadContext(ctx); err != nil {
			return fmt.Errorf("daemon-reload: %w", err)
		}
		return nil
	}
	// Buffered: go-systemd delivers the result while holding its job-listener lock, so an unread
	// channel after a timeout must never block it.
	ch := make(chan string, 1)
	var err error
	switch a.Action {
	case allowlist.ActionReload:
		_, err = s.conn.ReloadUnitContext(ctx, a.Unit, "replace", ch)
	case allowlist.ActionRestart:
		_, err = s.conn.RestartUnitContext(ctx, a.Unit, "replace", ch)
	default:
		return fmt.Errorf("%s: unknown action %q", a.Unit, a.Action)
	}
	if err := s.wait(ctx, a, ch, err); err != nil {
		return err
	}
	p, err := s.conn.GetUnitPropertyContext(ctx, a.Unit, "ActiveState")
	if err != nil {
		return fmt.Errorf("%s %s: reading ActiveState: %w", a.Action, a.Unit, err)
	}
	if state, _ := p.Value.Value().(string); state != "active" {
		return fmt.Errorf("%s %s: unit is %s after the job", a.Action, a.Unit, state)
	}
	return nil
}

// RunAll runs actions in order through u and stops at the first failure; it returns how many ran
// (none when u skips them). The same list runs forward after the commit and again after a rollback,
// so whatever kinds of action u dispatches keep one order both ways.
func RunAll(ctx context.Context, u Units, actions []plan.UnitAction) (int, error) {
	ran := 0
	for _, a := range actions {
		if err := u.Run(ctx, a); err != nil {
			return ran, err
		}
		if !skipsAction(u, a) {
			ran++
		}
		CrashPoint("action")
	}
	return ran, nil
}

// ErrNoSystemd marks a --systemd mode that is not recognised.
var ErrNoSystemd = errors.New("systemd mode must be system, user or none")

// ConnectUnits returns the Units for a --systemd mode.
func ConnectUnits(ctx context.Context, mode string) (Units, error) {
	switch mode {
	case "system":
		return DialSystemd(ctx, SystemSocket)
	case "user":
		return DialSystemd(ctx, UserSocket())
	case "none", "":
		return NoUnits{}, nil
	default:
		return nil, fmt.Errorf("%w, not %q", ErrNoSystemd, mode)
	}
}

// LazyUnits connects on first use, so a refresh without unit actions never needs a manager, and
// reconnects when the connection was lost (systemd re-executed, socket gone).
type LazyUnits struct {
	Connect func() (Units, error)
	mu      sync.Mutex
	u       Units
}

func (l *LazyUnits) get() (Units, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, ok := l.u.(interface{ Connected() bool }); ok && !c.Connected() {
		l.u.Close()
		l.u = nil
	}
	if l.u == nil {
		u, err := l.Connect()
		if err != nil {
			return nil, err
		}
		l.u = u
	}
	return l.u, nil
}

func (l *LazyUnits) Run(ctx context.Context, a plan.UnitAction) error {
	u, err := l.get()
	if err != nil {
		return fmt.Errorf("%s %s: %w", a.Action, a.Unit, err)
	}
	return u.Run(ctx, a)
}

// Ping connects if needed and checks that the manager answers.
func (l *LazyUnits) Ping(ctx context.Context) error {
	u, err := l.get()
	if err != nil {
		return err
	}
	if p, ok := u.(interface{ Ping(context.Context) error }); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (l *LazyUnits) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.u != nil {
		l.u.Close()
		l.u = nil
	}
}
