package allowlist_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/test/fixture"
)

const credDir = "/etc/kubernetes/credential-providers/"

// crioProvider is the provider the MCO's ContainerRuntimeConfig controller adds for a
// CRIOCredentialProviderConfig (updateCredentialProviderConfig), as its yaml.Marshal writes it.
const crioProvider = "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n" +
	"- apiVersion: credentialprovider.kubelet.k8s.io/v1\n  defaultCacheDuration: 1s\n  matchImages:\n  - registry.example.com\n" +
	"  name: crio-credential-provider\n  tokenAttributes:\n    cacheType: Token\n    requireServiceAccount: false\n" +
	"    serviceAccountTokenAudience: https://kubernetes.default.svc\n"

func TestCredentialProviderJudgeAcceptsTheMCOsConfigs(t *testing.T) {
	for name, tc := range map[string]struct{ path, data string }{
		"ecr":  {credDir + "ecr-credential-provider.yaml", string(fixture.CredentialProviderConfig("ecr"))},
		"gcr":  {credDir + "gcr-credential-provider.yaml", string(fixture.CredentialProviderConfig("gcr"))},
		"acr":  {credDir + "acr-credential-provider.yaml", string(fixture.CredentialProviderConfig("acr"))},
		"crio": {credDir + "generic-credential-provider.yaml", crioProvider},
		"JSON": {credDir + "ecr.json", `{"apiVersion":"kubelet.config.k8s.io/v1","kind":"CredentialProviderConfig","providers":[` +
			`{"name":"ecr-credential-provider","matchImages":["*.dkr.ecr.*.amazonaws.com"],"defaultCacheDuration":"12h","apiVersion":"credentialprovider.kubelet.k8s.io/v1"}]}`},
		"v1beta1": {credDir + "x.yml", strings.NewReplacer("kubelet.config.k8s.io/v1", "kubelet.config.k8s.io/v1beta1",
			"credentialprovider.kubelet.k8s.io/v1", "credentialprovider.kubelet.k8s.io/v1beta1").Replace(string(fixture.CredentialProviderConfig("ecr")))},
	} {
		t.Run(name, func(t *testing.T) {
			judge := allowlist.ContentJudge(tc.path)
			require.NotNil(t, judge)
			assert.NoError(t, judge([]byte(tc.data)))
		})
	}
}

func TestCredentialProviderJudgeRefusesCodeForTheRootPlugin(t *testing.T) {
	ecr := string(fixture.CredentialProviderConfig("ecr"))
	withEnv := ecr + "    env:\n      - name: LD_PRELOAD\n        value: /etc/kubernetes/credential-providers/x.so\n"
	for name, tc := range map[string]struct{ path, data, want string }{
		"adv27 F1: LD_PRELOAD":            {credDir + "x.yaml", withEnv, "providers[0].env"},
		"any env":                         {credDir + "x.yaml", ecr + "    env:\n      - name: AWS_REGION\n        value: us-east-1\n", "providers[0].env"},
		"adv27 F1: the .so":               {credDir + "x.so", "\x7fELF\x02\x01\x01", "only CredentialProviderConfig files"},
		"a script":                        {credDir + "x.sh", "#!/bin/sh\n", "only CredentialProviderConfig files"},
		"a config in a subdirectory":      {credDir + "sub/x.yaml", ecr, "directly in"},
		"a file in the directory's place": {"/etc/kubernetes/credential-providers", ecr, "directly in"},
		"a hidden file":                   {credDir + ".x.yaml", ecr, "only CredentialProviderConfig files"},
		"an ELF named .yaml":              {credDir + "x.yaml", "\x7fELF\x02\x01\x01\x00", "credential provider config"},
		"a plugin out of its dir":         {credDir + "x.yaml", strings.Replace(ecr, "name: ecr-credential-provider", "name: ../../../etc/kubernetes/credential-providers/x", 1), "providers[0].name"},
		"a dot plugin name":               {credDir + "x.yaml", strings.Replace(ecr, "name: ecr-credential-provider", "name: ..", 1), "providers[0].name"},
		"a plugin's log file":             {credDir + "x.yaml", ecr + "    args:\n      - --log_file=/etc/cron.d/x\n", "providers[0].args[0]"},
		"a plugin's config":               {credDir + "x.yaml", ecr + "    args:\n      - --config=/tmp/x\n", "providers[0].args[0]"},
		"miscased Env":                    {credDir + "x.yaml", strings.Replace(withEnv, "    env:", "    Env:", 1), "Env"},
		"env given twice":                 {credDir + "x.yaml", withEnv + "    env: []\n", "env"},
		"env through an anchor":           {credDir + "x.yaml", ecr + "    env: &e\n      - {name: LD_PRELOAD, value: /x.so}\n", "anchor"},
		"a second document":               {credDir + "x.yaml", ecr + "---\n" + withEnv, "more than one document"},
		"a List":                          {credDir + "x.yaml", "apiVersion: v1\nkind: List\nitems: []\n", "items"},
		"another kind":                    {credDir + "x.yaml", strings.Replace(ecr, "kind: CredentialProviderConfig", "kind: KubeletConfiguration", 1), "kind"},
		"another provider apiVersion":     {credDir + "x.yaml", strings.Replace(ecr, "apiVersion: credentialprovider.kubelet.k8s.io/v1", "apiVersion: x/v1", 1), "providers[0].apiVersion"},
		"an unknown field":                {credDir + "x.yaml", ecr + "    command: /bin/sh\n", "command"},
		"JSON env":                        {credDir + "x.json", `{"apiVersion":"kubelet.config.k8s.io/v1","kind":"CredentialProviderConfig","providers":[{"name":"p","matchImages":["x"],"apiVersion":"credentialprovider.kubelet.k8s.io/v1","env":[{"name":"LD_PRELOAD","value":"/x.so"}]}]}`, "env"},
		"JSON key twice":                  {credDir + "x.json", `{"apiVersion":"kubelet.config.k8s.io/v1","kind":"CredentialProviderConfig","providers":[],"providers":[{"name":"p","matchImages":["x"],"apiVersion":"credentialprovider.kubelet.k8s.io/v1","env":[{"name":"LD_PRELOAD","value":"/x.so"}]}]}`, "providers"},
	} {
		t.Run(name, func(t *testing.T) {
			judge := allowlist.ContentJudge(tc.path)
			require.NotNil(t, judge)
			err := judge([]byte(tc.data))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestCredProviderDropinJudge(t *testing.T) {
	const dropin = "/etc/systemd/system/kubelet.service.d/40-kubelet-crio-image-credential-provider.conf"
	judge := allowlist.ContentJudge(dropin)
	require.NotNil(t, judge)
	mco := string(fixture.CredProviderDropin(credDir + "generic-credential-provider.yaml"))
	assert.NoError(t, judge([]byte(mco)))
	assert.NoError(t, judge(fixture.CredProviderDropin(credDir+"ecr-credential-provider.yaml")))
	assert.NoError(t, judge([]byte("")), "an empty dropin sets nothing")
	for name, data := range map[string]string{
		"a command":               mco + "ExecStartPre=/bin/sh -c 'echo b > /proc/sysrq-trigger'\n",
		"LD_PRELOAD":              "[Service]\nEnvironment=LD_PRELOAD=/etc/kubernetes/credential-providers/x.so\n",
		"two assignments":         "[Service]\nEnvironment=\"KUBELET_CRIO_IMAGE_CREDENTIAL_PROVIDER_FLAGS=--image-credential-provider-bin-dir=/usr/libexec/kubelet-image-credential-provider-plugins --image-credential-provider-config=/etc/kubernetes/credential-providers/x.yaml\" LD_PRELOAD=/x.so\n",
		"a second line":           mco + "Environment=LD_PRELOAD=/x.so\n",
		"another kubelet flag":    strings.Replace(mco, " --image-credential-provider-config", " --pod-manifest-path=/tmp/m --image-credential-provider-config", 1),
		"another plugin dir":      strings.Replace(mco, "/usr/libexec/kubelet-image-credential-provider-plugins", "/etc/kubernetes/credential-providers", 1),
		"a config elsewhere":      strings.Replace(mco, credDir+"generic-credential-provider.yaml", "/tmp/x.yaml", 1),
		"a config out of the dir": strings.Replace(mco, "generic-credential-provider.yaml", "../kubelet.conf", 1),
		"a specifier":             strings.Replace(mco, "generic-credential-provider.yaml", "%H.yaml", 1),
		"a [Unit] section":        mco + "[Unit]\nOnFailure=reboot.target\n",
		"an [Install] section":    mco + "[Install]\nWantedBy=multi-user.target\n",
		"a continuation":          "[Service]\nEnvironment=\"KUBELET_CRIO_IMAGE_CREDENTIAL_PROVIDER_FLAGS=--image-credential-provider-bin-dir=/usr/libexec/kubelet-image-credential-provider-plugins \\\n --v=9\"\n",
	} {
		t.Run(name, func(t *testing.T) { assert.Error(t, judge([]byte(data))) })
	}
}

func TestPullSecretJudge(t *testing.T) {
	for _, p := range []string{"/var/lib/kubelet/config.json", "/etc/mco/internal-registry-pull-secret.json"} {
		judge := allowlist.ContentJudge(p)
		require.NotNil(t, judge, p)
		assert.NoError(t, judge([]byte(`{"auths":{"quay.io":{"auth":"eDp5","email":"a@example.com"}}}`)))
		assert.NoError(t, judge([]byte(`not json: nothing reads it as credentials, nothing runs`)))
		for _, data := range []string{`{"auths":{},"credHelpers":{"quay.io":"x"}}`, `{"credsStore":"x"}`, `{"auths":{},"CredHelpers":{"quay.io":"x"}}`} {
			err := judge([]byte(data))
			require.Error(t, err, data)
			assert.NotContains(t, err.Error(), `"x"`, "never a value")
		}
	}
}

func TestNMStateJudge(t *testing.T) {
	judge := allowlist.ContentJudge("/etc/nmstate/openshift/cluster.yml")
	require.NotNil(t, judge)
	assert.NoError(t, judge([]byte("interfaces:\n- name: br-ex\n  type: ovs-bridge\n  state: up\n  bridge:\n    port:\n    - name: enp2s0\n")))
	for name, data := range map[string]string{
		"an interface's dispatch script": "interfaces:\n- name: eth1\n  type: ethernet\n  dispatch:\n    post-activation: echo b > /proc/sysrq-trigger\n",
		"the top-level dispatch":         "dispatch:\n  interfaces:\n  - type: vxcan\n    activation: ip link add $name type vxcan\n",
		"a dispatch interface":           "interfaces:\n- name: x\n  type: dispatch\n",
		"through an anchor":              "a: &d {post-activation: x}\ninterfaces:\n- name: eth1\n  dispatch: *d\n",
	} {
		t.Run(name, func(t *testing.T) { assert.Error(t, judge([]byte(data))) })
	}
}
