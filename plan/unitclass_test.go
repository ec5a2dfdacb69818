package plan_test

import (
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 27 F2: under a unit rule (myapp.service, Restart) the payload's unit contents are judged by
// what they make systemd or the kernel do, by class. Every input the adversary got through, and the
// variants of each class, is refused naming the unit, the line and why; the MCO's own unit shapes
// are still accepted.
func TestUnitContentsJudgedByClass(t *testing.T) {
	svc := func(body string) string {
		return "[Unit]\nDescription=x\n[Service]\n" + body + "\n[Install]\nWantedBy=multi-user.target\n"
	}
	cur := withUnits(unit("myapp.service", str(svc("ExecStart=/bin/true"))))
	// name → unit body, the line the reason must name, and a fragment of why.
	refused := map[string]struct{ body, line, why string }{
		// Signals to PID 1, -1, or by name/pattern, in every spelling.
		"kill -INT 1":             {svc("ExecStart=/bin/kill -INT 1"), "ExecStart=/bin/kill -INT 1", "PID 1"},
		"kill -s SIGRTMIN+5 1":    {svc("ExecStart=/bin/kill -s SIGRTMIN+5 1"), "ExecStart=", "PID 1"},
		"kill -SIGRTMIN+13 1":     {svc("ExecStart=/bin/kill -SIGRTMIN+13 1"), "ExecStart=", "PID 1"},
		"kill --signal=INT 01":    {svc("ExecStart=/usr/bin/kill --signal=INT 01"), "ExecStart=", "PID 1"},
		"kill --signal INT -- -1": {svc("ExecStart=/usr/bin/kill --signal INT -- -1"), "ExecStart=", "every process"},
		"kill -9 -1":              {svc("ExecStart=/bin/kill -9 -1"), "ExecStart=", "every process"},
		"kill 0x1":                {svc("ExecStart=/bin/kill -TERM 0x1"), "ExecStart=", "PID 1"},
		"kill by name":            {svc("ExecStart=/bin/kill -INT systemd"), "ExecStart=", "only the unit's own $MAINPID"},
		"kill $PID":               {svc("ExecReload=/bin/kill -HUP $PID\nExecStart=/bin/true"), "ExecReload=", "$MAINPID"},
		"kill in sh":              {svc(`ExecStart=/bin/sh -c 'kill -s INT 1'`), "ExecStart=", "PID 1"},
		"kill subst pid":          {svc(`ExecReload=/bin/sh -c 'kill -HUP $(cat /run/x.pid)'`), "ExecReload=", "$MAINPID"},
		"pkill -x systemd":        {svc("ExecStart=/usr/bin/pkill -INT -x systemd"), "ExecStart=", "by name or pattern"},
		"killall init":            {svc("ExecStart=/usr/bin/killall -s INT init"), "ExecStart=", "by name or pattern"},
		"killall5":                {svc("ExecStart=/usr/sbin/killall5 -9"), "ExecStart=", "reboots"},
		"systemd-notify MAINPID":  {svc("ExecStart=/usr/bin/systemd-notify MAINPID=1"), "ExecStart=", "MAINPID=1"},
		"systemd-notify --pid":    {svc("ExecStart=/usr/bin/systemd-notify --pid=1 --ready"), "ExecStart=", "--pid=1"},
		// Writes to the kernel's switches, by argument, redirection or systemd's own stdio.
		"StandardOutput=file sysrq":   {svc("ExecStart=/bin/echo b\nStandardOutput=file:/proc/sysrq-trigger"), "StandardOutput=file:/proc/sysrq-trigger", "SysRq"},
		"StandardOutput=truncate":     {svc("ExecStart=/usr/bin/printf o\nStandardOutput=truncate:/proc/sysrq-trigger"), "StandardOutput=truncate:", "SysRq"},
		"StandardError=append power":  {svc("ExecStart=/bin/echo mem\nStandardError=append:/sys/power/state"), "StandardError=append:/sys/power/state", "/sys/power/state"},
		"StandardOutput=file log":     {svc("ExecStart=/bin/echo x\nStandardOutput=file:/var/log/myapp.log"), "StandardOutput=file:/var/log/myapp.log", "D-Bus"},
		"StandardInput=file watchdog": {svc("ExecStart=/bin/cat\nStandardInput=file:/dev/watchdog"), "StandardInput=file:/dev/watchdog", "watchdog"},
		"tee sysrq":                   {svc("StandardInputText=b\nStandardInput=data\nExecStart=/usr/bin/tee /proc/sysrq-trigger"), "ExecStart=/usr/bin/tee", "SysRq"},
		"cp to sysrq":                 {svc("ExecStart=/bin/cp /etc/myapp/b /proc/sysrq-trigger"), "ExecStart=", "SysRq"},
		"dd of=/sys/power/state":      {svc("ExecStart=/bin/dd if=/etc/myapp/mem of=/sys/power/state"), "ExecStart=", "/sys/power/state"},
		"echo > /sys/power/state":     {svc(`ExecStart=/bin/sh -c "echo mem > /sys/power/state"`), "ExecStart=", "/sys/power/state"},
		"printf>/proc/sys":            {svc(`ExecStart=/bin/sh -c "printf 1>/proc/sys/kernel/panic"`), "ExecStart=", "/proc/sys/kernel/panic"},
		"proc escape":                 {svc(`ExecStart=/bin/sh -c "echo b > /proc/1/root/proc/sysrq-trigger"`), "ExecStart=", "SysRq"},
		"proc root":                   {svc(`ExecStart=/usr/bin/tee /proc/1/root/sys/power/state`), "ExecStart=", "/proc/1/root"},
		"redirect via variable":       {svc("Environment=T=/proc/sysrq-trigger\nExecStart=/bin/sh -c 'echo b > $T'"), "ExecStart=", "/proc/sysrq-trigger"},
		"redirect via unknown var":    {svc("EnvironmentFile=/etc/myapp/env\nExecStart=/bin/sh -c 'echo b > $T'"), "ExecStart=", "variable the unit does not define"},
		"redirect via specifier":      {svc(`ExecStart=/bin/sh -c "echo mem > %S/../../sys/power/state"`), "ExecStart=", "/sys/power/state"},
		"cd /sys/power":               {svc(`ExecStart=/bin/sh -c "cd /sys/power && echo mem > state"`), "ExecStart=", "/sys/power"},
		"WorkingDirectory=/proc":      {svc("WorkingDirectory=/proc\nExecStart=/usr/bin/tee sysrq-trigger"), "WorkingDirectory=/proc", "kernel's state"},
		"WorkingDirectory=/sys/power": {svc("WorkingDirectory=/sys/power\nExecStart=/usr/bin/tee state"), "WorkingDirectory=/sys/power", "kernel's state"},
		"sysctl -w":                   {svc("ExecStart=/usr/sbin/sysctl -w kernel.panic=1"), "ExecStart=", "/proc/sys"},
		"sysctl key=value":            {svc("ExecStart=/usr/sbin/sysctl kernel.panic_on_oops=1"), "ExecStart=", "/proc/sys"},
		"watchdog":                    {svc(`ExecStart=/bin/sh -c "echo 1 > /dev/watchdog"`), "ExecStart=", "/dev/watchdog"},
		"disk write":                  {svc(`ExecStart=/bin/dd if=/dev/zero of=/dev/sda`), "ExecStart=", "/dev/sda"},
		"initctl fifo":                {svc(`ExecStart=/bin/sh -c "printf x > /run/initctl"`), "ExecStart=", "/run/initctl"},
		"manager socket":              {svc(`ExecStart=/usr/bin/socat - UNIX-CONNECT:/run/systemd/private`), "ExecStart=", "/run/systemd/private"},
		"bus socket via /var/run":     {svc(`ExecStart=/usr/bin/socat - UNIX-CONNECT:/var/run/dbus/system_bus_socket`), "ExecStart=", "/run/dbus"},
		"dropin into kubelet":         {svc(`ExecStart=/bin/sh -c "cp /etc/myapp/x.conf /etc/systemd/system/kubelet.service.d/"`), "ExecStart=", "/etc/systemd/system"},
		"rtcwake":                     {svc("ExecStart=/usr/sbin/rtcwake -m mem -s 60"), "ExecStart=", "suspends"},
		"ipmitool":                    {svc("ExecStart=/usr/bin/ipmitool chassis power reset"), "ExecStart=", "power-cycles"},
		"chvt":                        {svc("ExecStart=/usr/bin/chvt 9"), "ExecStart=", "console"},
		"kexec -l":                    {svc("ExecStart=/usr/sbin/kexec -l /boot/vmlinuz"), "ExecStart=", "reboots"},
		"systemd-shutdown":            {svc("ExecStart=/usr/lib/systemd/systemd-shutdown reboot"), "ExecStart=", "service manager"},
		"rpm-ostree via nsenter":      {svc("ExecStart=/usr/bin/nsenter -t 1 -m -- rpm-ostree rebase x"), "ExecStart=", "what it boots"},
		"bootc":                       {svc("ExecStart=/usr/bin/bootc upgrade --apply"), "ExecStart=", "what it boots"},
		"grub2-reboot":                {svc("ExecStart=/usr/sbin/grub2-reboot 1"), "ExecStart=", "what it boots"},
		// The kernel's state under another name: links, binds, patterns, placeholders.
		"glob redirect":       {svc(`ExecStart=/bin/sh -c "mount --bind /run/p /tmp/p; echo b > /tmp/p/sys?q-trigger"`), "ExecStart=", "pattern"},
		"find /proc -exec ln": {svc(`ExecStart=/usr/bin/find /proc -maxdepth 1 -name sys?q* -exec ln -s {} /tmp/t ;`), "ExecStart=", "find in /proc"},
		"xargs ln {}":         {svc(`ExecStart=/bin/sh -c "ls -d /run/x/* | xargs -I{} ln -s {} /tmp/t"`), "ExecStart=", "placeholder"},
		"ln -s /proc":         {svc(`ExecStart=/usr/bin/ln -s /proc /tmp/p`), "ExecStart=", "/proc"},
		"bind /proc":          {svc(`ExecStart=/usr/bin/mount --bind /proc /tmp/p`), "ExecStart=", "another name"},
		"tee glob":            {svc(`ExecStart=/usr/bin/tee /tmp/p/sys?q-trigger`), "ExecStart=", "pattern"},
		// Job modes and what a unit's end starts.
		"OnFailureJobMode=isolate":      {svc("ExecStart=/bin/false") + "[Unit]\nOnFailure=myapp-notify.service\nOnFailureJobMode=isolate\n", "OnFailureJobMode=isolate", "stop every unit"},
		"OnSuccessJobMode=isolate":      {svc("ExecStart=/bin/true") + "[Unit]\nOnSuccess=myapp-notify.service\nOnSuccessJobMode=isolate\n", "OnSuccessJobMode=isolate", "stop every unit"},
		"OnFailureJobMode irreversibly": {svc("ExecStart=/bin/false") + "[Unit]\nOnFailureJobMode=replace-irreversibly\n", "OnFailureJobMode=replace-irreversibly", "cancelled"},
		"OnFailureJobMode flush":        {svc("ExecStart=/bin/false") + "[Unit]\nOnFailureJobMode=flush\n", "OnFailureJobMode=flush", "queued"},
		"OnFailureJobMode ignore-deps":  {svc("ExecStart=/bin/false") + "[Unit]\nOnFailureJobMode=ignore-dependencies\n", "OnFailureJobMode=ignore-dependencies", "outside the rules"},
		"OnFailure=basic.target":        {svc("ExecStart=/bin/false") + "[Unit]\nOnFailure=basic.target\n", "OnFailure=basic.target", "a target"},
		"OnSuccess=multi-user.target":   {svc("ExecStart=/bin/true") + "[Unit]\nOnSuccess=multi-user.target\n", "OnSuccess=multi-user.target", "a target"},
		"OnFailure=dbus.service":        {svc("ExecStart=/bin/false") + "[Unit]\nOnFailure=dbus.service\n", "OnFailure=dbus.service", "essentials"},
		"OnFailure=debug-shell":         {svc("ExecStart=/bin/false") + "[Unit]\nOnFailure=debug-shell.service\n", "OnFailure=debug-shell.service", "console"},
		"OnFailure=systemd-sysext":      {svc("ExecStart=/bin/false") + "[Unit]\nOnFailure=systemd-sysext.service\n", "OnFailure=systemd-sysext.service", "merges images"},
		// The manager, logind and the bus, in every form (options before or after the verb, = or space).
		"systemctl --job-mode=isolate": {svc("ExecStart=/usr/bin/systemctl --job-mode=isolate start basic.target"), "ExecStart=", "service manager"},
		"systemctl --job-mode isolate": {svc("ExecStart=/usr/bin/systemctl --job-mode isolate start basic.target"), "ExecStart=", "service manager"},
		"systemctl start --job-mode=":  {svc("ExecStart=/usr/bin/systemctl start basic.target --job-mode=isolate"), "ExecStart=", "service manager"},
		"systemctl stop kubelet crio":  {svc("ExecStart=/usr/bin/systemctl stop kubelet.service crio.service"), "ExecStart=", "service manager"},
		"systemctl mask --now kubelet": {svc("ExecStart=/usr/bin/systemctl mask --now kubelet"), "ExecStart=", "service manager"},
		"systemctl stop sysinit":       {svc("ExecStart=/usr/bin/systemctl stop sysinit.target"), "ExecStart=", "service manager"},
		"busctl StartUnit isolate":     {svc("ExecStart=/usr/bin/busctl call org.freedesktop.systemd1 /org/freedesktop/systemd1 org.freedesktop.systemd1.Manager StartUnit ss basic.target isolate"), "ExecStart=", "service manager"},
		"dbus-send logind":             {svc("ExecStart=/usr/bin/dbus-send --system --dest=org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager.Reboot boolean:true"), "ExecStart=", "logind"},
		"gdbus":                        {svc("ExecStart=/usr/bin/gdbus call --system --dest org.freedesktop.systemd1 --object-path /org/freedesktop/systemd1 --method org.freedesktop.systemd1.Manager.StopUnit kubelet.service replace"), "ExecStart=", "service manager"},
		"loginctl":                     {svc("ExecStart=/usr/bin/loginctl terminate-seat seat0"), "ExecStart=", "logind"},
		"telinit":                      {svc("ExecStart=/sbin/telinit 6"), "ExecStart=", "service manager"},
		"env systemctl":                {svc("ExecStart=/usr/bin/env -i systemctl stop crio"), "ExecStart=", "service manager"},
		"systemd-run -p":               {svc("ExecStart=/usr/bin/systemd-run -p SuccessAction=reboot /bin/true"), "ExecStart=", "-p"},
		"systemd-run --property=":      {svc("ExecStart=/usr/bin/systemd-run --property=FailureAction=poweroff /bin/false"), "ExecStart=", "--property"},
		"systemd-run --on-active":      {svc("ExecStart=/usr/bin/systemd-run --on-active=5 /bin/true"), "ExecStart=", "--on-active"},
		"systemd-run --unit=reboot":    {svc("ExecStart=/usr/bin/systemd-run --unit=systemd-reboot /bin/true"), "ExecStart=", "systemd-reboot"},
		"systemd-run reboot":           {svc("ExecStart=/usr/bin/systemd-run --wait -P reboot"), "ExecStart=", "reboots"},
		"crictl stopp":                 {svc("ExecStart=/usr/bin/crictl stopp -a"), "ExecStart=", "pods"},
		// Mounts, disks, swap, modules.
		"umount -a":                {svc("ExecStart=/usr/bin/umount -a -f"), "ExecStart=", "every mount"},
		"umount /var":              {svc("ExecStop=/usr/bin/umount -l /var\nExecStart=/bin/true"), "ExecStop=", "system mounts"},
		"umount //sysroot/":        {svc("ExecStart=/usr/bin/umount //sysroot/"), "ExecStart=", "system mounts"},
		"umount unknown var":       {svc("EnvironmentFile=/etc/x\nExecStop=/usr/bin/umount $X\nExecStart=/bin/true"), "ExecStop=", "variable"},
		"mount -o remount,ro /":    {svc("ExecStart=/usr/bin/mount -o remount,ro /"), "ExecStart=", "system mounts"},
		"mount over /etc":          {svc("ExecStart=/usr/bin/mount --bind /run/x /etc"), "ExecStart=", "system mounts"},
		"mount tmpfs over kubelet": {svc("ExecStart=/usr/bin/mount -t tmpfs tmpfs /var/lib/kubelet"), "ExecStart=", "system mounts"},
		"fsfreeze":                 {svc("ExecStart=/usr/sbin/fsfreeze -f /"), "ExecStart=", "disks"},
		"swapoff":                  {svc("ExecStart=/usr/sbin/swapoff -a"), "ExecStart=", "swap"},
		"blkdeactivate":            {svc("ExecStop=/usr/sbin/blkdeactivate -u -d retry\nExecStart=/bin/true"), "ExecStop=", "disks"},
		"iscsiadm logout":          {svc("ExecStop=/usr/sbin/iscsiadm -m node --logoutall=all\nExecStart=/bin/true"), "ExecStop=", "disks"},
		"modprobe -r":              {svc("ExecStart=/usr/sbin/modprobe -r nvme"), "ExecStart=", "kernel module"},
		// Scripts the judge cannot see.
		"pipe into sh":           {svc(`ExecStart=/bin/sh -c "echo reboot | sh"`), "ExecStart=", "standard input"},
		"base64 into bash":       {svc(`ExecStart=/bin/bash -c "echo cmVib290 | base64 -d | bash"`), "ExecStart=", "standard input"},
		"xxd into sh -s":         {svc(`ExecStart=/bin/sh -c "xxd -r -p /etc/x | sh -s"`), "ExecStart=", "standard input"},
		"here-document":          {svc(`ExecStart=/bin/sh -c "sh <<EOF\nreboot\nEOF"`), "ExecStart=", ""},
		"process substitution":   {svc(`ExecStart=/bin/bash -c "bash <(base64 -d /etc/x)"`), "ExecStart=", "process substitution"},
		"decoded then run":       {svc(`ExecStart=/bin/sh -c "base64 -d /etc/x > /tmp/r; sh /tmp/r"`), "ExecStart=", "/tmp/r"},
		"decoded then executed":  {svc(`ExecStart=/bin/sh -c "base64 -d /etc/x > /tmp/r; chmod +x /tmp/r; /tmp/r"`), "ExecStart=", "/tmp/r"},
		"eval":                   {svc(`ExecStart=/bin/sh -c "eval re''boot"`), "ExecStart=", "from a string"},
		"source":                 {svc(`ExecStart=/bin/bash -c "source /etc/myapp/env"`), "ExecStart=", "from a string or a file"},
		"dot":                    {svc(`ExecStart=/bin/sh -c ". /etc/myapp/env"`), "ExecStart=", "from a string or a file"},
		"command substitution":   {svc(`ExecStart=/bin/sh -c "$(echo reboot)"`), "ExecStart=", "substitution"},
		"backticks":              {svc("ExecStart=/bin/sh -c '`echo reboot`'"), "ExecStart=", "substitution"},
		"backtick assignment":    {svc("ExecStart=/bin/sh -c 'x=`reboot`'"), "ExecStart=", "reboots"},
		"variable command":       {svc(`ExecStart=/bin/sh -c "a=re; b=boot; $a$b"`), "ExecStart=", "variable"},
		"sh stdin":               {svc("StandardInput=data\nStandardInputText=reboot\nExecStart=/bin/sh"), "ExecStart=/bin/sh", "standard input"},
		"bash -s":                {svc("ExecStart=/bin/bash -s"), "ExecStart=", "standard input"},
		"sh -c without script":   {svc("ExecStart=/bin/sh -c"), "ExecStart=", "without a script"},
		"python -c":              {svc(`ExecStart=/usr/bin/python3 -c "import os; os.system('reboot')"`), "ExecStart=", "inline code"},
		"python3.11 -Ic":         {svc(`ExecStart=/usr/bin/python3.11 -Ic "print(1)"`), "ExecStart=", "inline code"},
		"perl -e":                {svc(`ExecStart=/usr/bin/perl -e "system(q(reboot))"`), "ExecStart=", "inline code"},
		"perl -ne":               {svc(`ExecStart=/usr/bin/perl -ne "print" /etc/x`), "ExecStart=", "inline code"},
		"python stdin":           {svc(`ExecStart=/usr/bin/python3`), "ExecStart=", "standard input"},
		"awk system":             {svc(`ExecStart=/usr/bin/awk 'BEGIN{system("reboot")}'`), "ExecStart=", "awk"},
		"awk redirect":           {svc(`ExecStart=/usr/bin/awk 'BEGIN{print "b" > "/proc/sysrq-trigger"}'`), "ExecStart=", "SysRq"},
		"sed e":                  {svc(`ExecStart=/usr/bin/sed -n '1e reboot' /etc/hostname`), "ExecStart=", "sed"},
		"sed s///e":              {svc(`ExecStart=/usr/bin/sed 's/.*/reboot/e' /etc/hostname`), "ExecStart=", "sed"},
		"find -exec":             {svc(`ExecStart=/usr/bin/find /etc -maxdepth 0 -exec /sbin/reboot ;`), "ExecStart=", "reboots"},
		"su -c":                  {svc(`ExecStart=/usr/bin/su root -c "systemctl poweroff"`), "ExecStart=", "service manager"},
		"flock -c":               {svc(`ExecStart=/usr/bin/flock /run/x -c "kill -INT 1"`), "ExecStart=", "PID 1"},
		"watch":                  {svc(`ExecStart=/usr/bin/watch -n 60 systemctl reboot`), "ExecStart=", "service manager"},
		"tar --to-command":       {svc(`ExecStart=/usr/bin/tar -xf /etc/x.tar --to-command=reboot`), "ExecStart=", "reboots"},
		"busybox reboot":         {svc("ExecStart=/usr/bin/busybox reboot"), "ExecStart=", "reboots"},
		"relative halt":          {svc("ExecStart=halt -f"), "ExecStart=halt", "halts"},
		"dotdot path":            {svc("ExecStart=/usr/bin/../sbin/poweroff"), "ExecStart=", "halts"},
		"ExecStopPost":           {svc("ExecStart=/bin/true\nExecStopPost=/usr/sbin/shutdown -h now"), "ExecStopPost=", "halts"},
		"ExecCondition":          {svc("ExecCondition=/bin/kill -INT 1\nExecStart=/bin/true"), "ExecCondition=", "PID 1"},
		"second command on line": {svc("ExecStart=/bin/true ; /bin/kill -INT 1"), "ExecStart=", "PID 1"},
		"sulogin console shell":  {svc("ExecStart=-/usr/lib/systemd/systemd-sulogin-shell emergency\nStandardInput=tty-force"), "ExecStart=", "console"},
		"tty shell":              {svc("ExecStart=/bin/bash\nStandardInput=tty\nTTYPath=/dev/tty9"), "StandardInput=tty", "console"},
	}
	// The reasons are the classes' where the programs are granted (grantedPolicy); the payload's
	// own lines are refused whatever they run (issue 27 class 3).
	for name, c := range refused {
		t.Run(name, func(t *testing.T) {
			assert.False(t, ndpBuild(t, ndpPolicy, cur, withUnits(unit("myapp.service", str(c.body)))).Eligible)
			p := ndpBuild(t, grantedPolicy, cur, withUnits(unit("myapp.service", str(c.body))))
			require.False(t, p.Eligible, "refused: %s", c.body)
			require.NotEmpty(t, p.Refused)
			r := p.Refused[0].Reason
			assert.Contains(t, r, "unit myapp.service")
			assert.Contains(t, r, c.line)
			assert.Contains(t, r, c.why)
			assert.NotContains(t, r, "\n", "a reason is one line")
			assert.Empty(t, p.Actions)
			// The same contents in a dropin are judged the same way.
			base := svc("ExecStart=/bin/true")
			p = ndpBuild(t, ndpPolicy, cur, withUnits(unit("myapp.service", str(base), types.Dropin{Name: "50-x.conf", Contents: str(c.body)})))
			assert.False(t, p.Eligible, "as a dropin")
		})
	}

	// The unit shapes the MCO and podman write, and the reload idiom, are still accepted.
	accepted := map[string]string{
		"iri-registry": "[Unit]\nDescription=InternalReleaseImage Registry\nWants=network.target\n[Service]\nEnvironment=PODMAN_SYSTEMD_UNIT=%n\n" +
			"ExecStartPre=/bin/rm -f %t/%n.ctr-id\nExecStartPre=/usr/bin/mkdir -p /var/lib/myapp\n" +
			"ExecStart=podman run --net host --cidfile=%t/%n.ctr-id --log-driver=journald --replace --name=iri-registry -v /var/lib/myapp:/var/lib/registry:ro -e REGISTRY_HTTP_ADDR=0.0.0.0:22625 -u 0 --entrypoint=/usr/bin/distribution quay.io/x/registry@sha256:0 serve /etc/registry/config.yaml\n" +
			"ExecStop=/usr/bin/podman stop --ignore --cidfile=%t/%n.ctr-id\nExecStopPost=/usr/bin/podman rm -f --ignore --cidfile=%t/%n.ctr-id\nType=notify\nNotifyAccess=all\n[Install]\nWantedBy=multi-user.target\n",
		// kubens.service's shape, its directory the unit's own (issue 27: RuntimeDirectory=kubens in
		// myapp.service would remove /run/kubens when myapp stops; refused in TestPlanChangesOnlyModeledSettings).
		"kubens": "[Unit]\nDescription=Manages a mount namespace for kubernetes-specific mounts\n[Service]\nType=oneshot\nRemainAfterExit=yes\nRuntimeDirectory=myapp\n" +
			"Environment=RUNTIME_DIRECTORY=%t/myapp\nEnvironment=BIND_POINT=%t/myapp/mnt\nEnvironment=ENVFILE=%t/myapp/env\n" +
			`ExecStartPre=bash -c "findmnt ${RUNTIME_DIRECTORY} || mount --make-unbindable --bind ${RUNTIME_DIRECTORY} ${RUNTIME_DIRECTORY}"` + "\n" +
			"ExecStartPre=touch ${BIND_POINT}\nExecStart=unshare --mount=${BIND_POINT} --propagation slave mount --make-rshared /\n" +
			`ExecStartPost=bash -c 'echo "KUBENSMNT=${BIND_POINT}" > "${ENVFILE}"'` + "\n" +
			`ExecStartPost=bash -c "ip netns add kubensmnt && ip netns delete kubensmnt || mountpoint -q /run/netns"` + "\n" +
			"ExecStop=umount -R ${RUNTIME_DIRECTORY}\n[Install]\nWantedBy=multi-user.target\n",
		"reload idiom": svc("ExecStart=/usr/bin/myapp --config /etc/myapp/a.conf\nExecReload=/bin/kill -HUP $MAINPID\nExecStop=/bin/kill -s TERM ${MAINPID}"),
		"kill in sh":   svc(`ExecStart=/usr/bin/myapp` + "\n" + `ExecReload=/bin/sh -c 'kill -HUP $MAINPID 2>&1 && echo reloaded >> /var/log/myapp.log'`),
		"ovs chown":    svc(`ExecStartPre=-/bin/sh -c '/usr/bin/chown -R :$${OVS_USER_ID##*:} /etc/openvswitch'` + "\nExecStart=/usr/bin/ovs-vswitchd\nExecReload=-/usr/bin/ovs-appctl vlog/set syslog:info"),
		"podman pull loop": svc(`ExecStartPre=/etc/machine-config-daemon/generate_podman_policy_args.sh` + "\n" +
			`ExecStart=/bin/sh -c "while ! /usr/bin/podman pull $(cat /tmp/podman_policy_args) --authfile=/var/lib/kubelet/config.json 'quay.io/x@sha256:0'; do sleep 1; done"`),
		"script with env args": svc("EnvironmentFile=/etc/node-sizing.env\nExecStart=/bin/bash /usr/local/sbin/dynamic-system-reserved-calc.sh ${NODE_SIZING_ENABLED} ${SYSTEM_RESERVED_MEMORY}"),
		"kubelet shape": svc("ExecStartPre=/bin/mkdir --parents /etc/myapp/manifests\nExecStartPre=-/usr/sbin/restorecon -ri /var/lib/myapp/pod-resources\n" +
			"ExecStart=/usr/local/bin/kubenswrapper /usr/bin/kubelet --config=/etc/kubernetes/kubelet.conf --resolv-conf=/run/systemd/resolve/resolv.conf \\\n  --node-ip=${KUBELET_NODE_IP}\nStandardOutput=journal+console\nStandardError=journal+console"),
		"cp a pattern":      svc(`ExecStartPre=/bin/sh -c "cp /var/lib/myapp/*.conf /run/myapp/"` + "\nExecStart=/usr/bin/myapp"),
		"cp an etc pattern": svc(`ExecStartPre=/bin/sh -c "cp /etc/myapp/*.conf /run/myapp/"` + "\nExecStart=/usr/bin/myapp"),
		"sed in place":      svc(`ExecStartPre=-/usr/bin/sh -c "sed -i 's/enabled=1/enabled=0/' /etc/yum.repos.d/*.repo"` + "\nExecStart=/usr/bin/myapp"),
		"notify ready":      svc("Type=notify\nExecStart=/usr/bin/myapp\nExecStartPost=/usr/bin/systemd-notify --ready --status=up"),
		"sh -c ordinary":    svc(`ExecStart=/bin/sh -c 'echo "ready $(date)" > /run/myapp; exec /usr/bin/myapp --reboot-policy=never'`),
		"python script":     svc("ExecStart=/usr/bin/python3 -u /usr/local/bin/myapp.py --port 8080"),
		"awk print":         svc(`ExecStart=/bin/sh -c "ip -o addr | awk '{print $4}' > /run/myapp/addrs"`),
		"systemd-run ok":    svc("ExecStart=/usr/bin/systemd-run --scope --unit=myapp-child --setenv=A=b /usr/bin/myapp"),
		"on failure":        svc("ExecStart=/usr/bin/myapp") + "[Unit]\nOnFailure=myapp-notify.service\nOnFailureJobMode=replace\n",
		"runtime dir out":   svc("RuntimeDirectory=myapp\nStandardOutput=journal\nWorkingDirectory=/var/lib/myapp\nExecStart=/bin/sh -c 'myapp > $RUNTIME_DIRECTORY/out'"),
	}
	// Issue 27 round 4: a line the payload adds runs programs and scripts only from read-only OS
	// content and the node's own program dirs (/usr/local/bin, …), and no container image; these
	// node shapes, added by a payload, are refused (on the node, unchanged, they are accepted:
	// allowlist TestUnchangedLinesKeepTheNodesOwnPrograms).
	strict := map[string]string{"iri-registry": "podman run",
		"podman pull loop": "/etc/machine-config-daemon/generate_podman_policy_args.sh",
		// Issue 27 class 3: a changed line's sed -i and chown change what they edit as a write
		// does: not the package repositories nor the switch's database (denied, the node's).
		"sed in place": "writes /etc/yum.repos.d", "ovs chown": "writes /etc/openvswitch",
		// Round 19: a pattern outside the unit's own places that may match a secret's name
		// (password.conf) copies what the judge cannot see; in /var/lib/myapp it is the unit's own.
		"cp an etc pattern": "may match"}
	for name, body := range accepted {
		p := ndpBuild(t, grantedPolicy, cur, withUnits(unit("myapp.service", str(body))))
		if why, ok := strict[name]; ok {
			if assert.False(t, p.Eligible, name) && assert.NotEmpty(t, p.Refused) {
				assert.Contains(t, p.Refused[0].Reason, why, name)
				assert.Contains(t, p.Refused[0].Reason, "a changed line", name)
			}
			continue
		}
		assert.True(t, p.Eligible, "%s: %+v", name, p.Refused)
	}
}

// grantedPolicy is ndpPolicy granting myapp.service the node programs the MCO's and podman's unit
// shapes run (issue 27 class 3: an added line runs only modeled or granted programs).
var grantedPolicy = strings.Replace(ndpPolicy, "myapp.service: [/usr/bin/myapp,", "myapp.service: [/usr/bin/myapp, /usr/bin/findmnt, "+
	"/usr/bin/mount, /usr/bin/umount, /usr/bin/unshare, /usr/sbin/ip, /usr/bin/ovs-vswitchd, /usr/bin/ovs-appctl, /usr/bin/kubelet, "+
	"/usr/bin/base64, /usr/bin/xxd, /usr/bin/mountpoint,", 1)
