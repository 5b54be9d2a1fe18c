// Command ferrybox holds the box's own programs, one subcommand each:
//
//	ferrybox pki --dir DIR --server URL          certificates, keys and kubeconfigs
//	ferrybox bootstrap --kubeconfig F FILE...    apply manifests (server-side apply)
//	ferrybox cri-reset --endpoint SOCKET         stop and remove every pod sandbox of a container runtime
//	ferrybox keep-logs --logs DIR PODLOGSDIR...  keep real nodes' container logs after their pods are gone
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"ferry.dev/cluster/internal/bootstrap"
	"ferry.dev/cluster/internal/crireset"
	"ferry.dev/cluster/internal/logkeeper"
	"ferry.dev/cluster/internal/pki"
)

var commands = map[string]func(args []string) error{
	"pki":       runPKI,
	"bootstrap": runBootstrap,
	"cri-reset": runCRIReset,
	"keep-logs": runKeepLogs,
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: ferrybox pki|bootstrap|cri-reset|keep-logs ...")
		os.Exit(2)
	}
	run, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "ferrybox: unknown command %q\n", os.Args[1])
		os.Exit(2)
	}
	if err := run(os.Args[2:]); err != nil {
		fmt.Fprintf(os.Stderr, "ferrybox %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ExitOnError)
	klog.InitFlags(fs)
	return fs
}

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
}

func loadConfig(path string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	return cfg, nil
}

func runPKI(args []string) error {
	fs := newFlags("pki")
	dir := fs.String("dir", "", "folder for certificates, keys and kubeconfigs")
	server := fs.String("server", "", "apiserver URL written into the kubeconfigs")
	nodes := fs.String("nodes", "", "comma-separated names of real nodes to issue kubelet certificates for")
	hostIP := fs.String("host-ip", "", "address the apiserver and the kubelets serve pods on (real nodes)")
	_ = fs.Parse(args)
	if *dir == "" || *server == "" {
		return fmt.Errorf("--dir and --server are required")
	}
	var real pki.Nodes
	if *nodes != "" {
		real.Names = strings.Split(*nodes, ",")
		if real.HostIP = net.ParseIP(*hostIP); real.HostIP == nil {
			return fmt.Errorf("--host-ip: %q is not an IP address (required with --nodes)", *hostIP)
		}
	}
	return pki.Generate(*dir, *server, real)
}

func runBootstrap(args []string) error {
	fs := newFlags("bootstrap")
	kubeconfig := fs.String("kubeconfig", "", "admin kubeconfig")
	_ = fs.Parse(args)
	cfg, err := loadConfig(*kubeconfig)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return bootstrap.Apply(ctx, cfg, fs.Args())
}

func runCRIReset(args []string) error {
	fs := newFlags("cri-reset")
	endpoint := fs.String("endpoint", "", "unix socket of the CRI runtime")
	_ = fs.Parse(args)
	if *endpoint == "" {
		return fmt.Errorf("--endpoint is required")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return crireset.Run(ctx, *endpoint)
}

func runKeepLogs(args []string) error {
	fs := newFlags("keep-logs")
	logs := fs.String("logs", "", "folder to keep the logs in, per namespace, pod and container")
	_ = fs.Parse(args)
	if *logs == "" || fs.NArg() == 0 {
		return fmt.Errorf("--logs and at least one kubelet podLogsDir are required")
	}
	ctx, cancel := signalContext()
	defer cancel()
	return logkeeper.Run(ctx, fs.Args(), *logs)
}
