package pki

import (
	"fmt"
	"net"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Client identities that get a kubeconfig, by file base name. The
// snapshot-controller and Velero authenticate with the user name of the ServiceAccount
// their published RBAC binds, so that RBAC applies unchanged.
var clients = []Identity{
	{File: "admin", CN: "ferrybox-admin", Orgs: []string{"system:masters"}},
	{File: "controller-manager", CN: "system:kube-controller-manager"},
	{File: "scheduler", CN: "system:kube-scheduler"},
	{File: "storage-driver", CN: "ferrybox:storage-driver"},
	{File: "snapshot-controller", CN: "system:serviceaccount:kube-system:snapshot-controller"},
	{File: "velero", CN: "system:serviceaccount:velero:velero"},
}

// Nodes are the real kubelets of a box with real nodes: each gets a client
// certificate as system:node:NAME in system:nodes (what the Node authorizer and
// NodeRestriction admit) and a serving certificate for its port on HostIP.
// kube-proxy gets the identity the default system:node-proxier binding names.
type Nodes struct {
	Names  []string
	HostIP net.IP
}

// serviceIPs are the kubernetes Service's addresses of the box's first and second site (test/cluster/components.ts:
// serviceRanges): pods verify the apiserver's certificate at that address.
var serviceIPs = []net.IP{net.IPv4(10, 0, 0, 1), net.IPv4(10, 0, 1, 1)}

// Generate writes the CA, every certificate, the service-account key and one
// kubeconfig per client identity into dir.
func Generate(dir, server string, nodes Nodes) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ca, err := NewCA(dir, "ferrybox-ca")
	if err != nil {
		return err
	}
	loopback := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	servers := []Identity{
		{File: "apiserver", CN: "kube-apiserver", Server: true,
			DNS: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
				"kubernetes.default.svc.cluster.local"},
			IPs: append(append(loopback, serviceIPs...), hostIPs(nodes)...)},
		{File: "apiserver-kubelet-client", CN: "kube-apiserver-kubelet-client", Orgs: []string{"system:masters"}},
		// the csi-snapshot-metadata sidecar, which pods and tests reach at the host's address
		{File: "snapshot-metadata", CN: "csi-snapshot-metadata", Server: true, DNS: []string{"localhost"},
			IPs: append(loopback, hostIPs(nodes)...)},
	}
	all := append([]Identity{}, clients...)
	for _, name := range nodes.Names {
		all = append(all, Identity{File: name, CN: "system:node:" + name, Orgs: []string{"system:nodes"}})
		servers = append(servers, Identity{File: name + "-serving", CN: name, Server: true,
			DNS: []string{name, "localhost"}, IPs: append(loopback, hostIPs(nodes)...)})
	}
	if len(nodes.Names) > 0 {
		all = append(all, Identity{File: "kube-proxy", CN: "system:kube-proxy"})
	}
	for _, id := range append(servers, all...) {
		if err := ca.Issue(dir, id); err != nil {
			return err
		}
	}
	if err := ServiceAccountKey(dir); err != nil {
		return err
	}
	for _, id := range all {
		if err := writeKubeconfig(dir, server, id.File); err != nil {
			return err
		}
	}
	return webhookClient(dir)
}

func hostIPs(nodes Nodes) []net.IP {
	if nodes.HostIP == nil {
		return nil
	}
	return []net.IP{nodes.HostIP}
}

// WebhookClientCN is the common name of the certificate kube-apiserver presents to admission webhooks.
const WebhookClientCN = "kube-apiserver-webhook-client"

// webhookClient writes what kube-apiserver needs to present a client
// certificate to admission webhooks, as a cluster operator configures it:
// webhook-client/ca.crt (a CA of its own, so a webhook trusting it trusts no
// other identity of the box), webhook-client/client.{crt,key}, a kubeconfig
// giving that pair for every webhook host ("*"), and admission.yaml, the
// --admission-control-config-file naming that kubeconfig for both webhook
// admission plugins.
func webhookClient(dir string) error {
	sub := filepath.Join(dir, "webhook-client")
	if err := os.MkdirAll(sub, 0o700); err != nil {
		return err
	}
	ca, err := NewCA(sub, "ferrybox-webhook-client-ca")
	if err != nil {
		return err
	}
	if err := ca.Issue(sub, Identity{File: "client", CN: WebhookClientCN}); err != nil {
		return err
	}
	kubeconfig := filepath.Join(sub, "kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.AuthInfos["*"] = &clientcmdapi.AuthInfo{ClientCertificate: filepath.Join(sub, "client.crt"), ClientKey: filepath.Join(sub, "client.key")}
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", kubeconfig, err)
	}
	plugin := func(name string) string {
		return fmt.Sprintf("  - name: %s\n    configuration:\n      apiVersion: apiserver.config.k8s.io/v1\n      kind: WebhookAdmissionConfiguration\n      kubeConfigFile: %q\n", name, kubeconfig)
	}
	admission := "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n" +
		plugin("ValidatingAdmissionWebhook") + plugin("MutatingAdmissionWebhook")
	return os.WriteFile(filepath.Join(dir, "admission.yaml"), []byte(admission), 0o644)
}

// writeKubeconfig embeds the CA and the client pair so the file can be copied anywhere.
func writeKubeconfig(dir, server, name string) error {
	read := func(file string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, file)) }
	caData, err := read("ca.crt")
	if err != nil {
		return err
	}
	cert, err := read(name + ".crt")
	if err != nil {
		return err
	}
	key, err := read(name + ".key")
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["ferrybox"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caData}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	cfg.Contexts["ferrybox"] = &clientcmdapi.Context{Cluster: "ferrybox", AuthInfo: name, Namespace: "default"}
	cfg.CurrentContext = "ferrybox"
	path := filepath.Join(dir, name+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}
