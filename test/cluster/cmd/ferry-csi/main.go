// Command ferry-csi is the box's CSI driver (internal/csi): one process per
// node serving the Node service and registering with that node's kubelet, and
// one serving the Controller services beside the sidecars.
//
//	ferry-csi --endpoint unix:///var/lib/kubelet/plugins/local.csi.ferry.dev/csi.sock \
//	  --storage-root DIR --node-id node-1 --registration-dir /var/lib/kubelet/plugins_registry
//	ferry-csi --endpoint unix:///run/ferry-csi/controller.sock --storage-root DIR --controller
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sync/errgroup"
	"k8s.io/klog/v2"

	"ferry.dev/cluster/internal/csi"
	"ferry.dev/cluster/internal/layout"
)

func main() {
	fs := flag.NewFlagSet("ferry-csi", flag.ExitOnError)
	klog.InitFlags(fs)
	endpoint := fs.String("endpoint", "", "unix socket to serve CSI on (unix:///path or /path)")
	root := fs.String("storage-root", "", "folder of the volumes and snapshots, shared by every node of the box")
	nodeID := fs.String("node-id", "", "serve the Node service as this node (its Kubernetes node name)")
	controller := fs.Bool("controller", false, "serve the Controller, GroupController and SnapshotMetadata services")
	delay := fs.Duration("snapshot-ready-delay", 0, "time a new snapshot reports ready_to_use=false (VolumeSnapshotClass parameter readyDelay overrides it)")
	registry := fs.String("registration-dir", "", "the kubelet's plugins_registry folder; registers the Node service there (needs --node-id)")
	_ = fs.Parse(os.Args[1:])
	opts := csi.Options{Storage: layout.Storage{Root: *root}, NodeID: *nodeID, Controller: *controller,
		SnapshotReadyDelay: *delay, Version: "ferrybox"}
	if err := run(*endpoint, opts, *registry); err != nil {
		fmt.Fprintf(os.Stderr, "ferry-csi: %v\n", err)
		os.Exit(1)
	}
}

func run(endpoint string, opts csi.Options, registry string) error {
	if endpoint == "" {
		return errors.New("--endpoint is required")
	}
	if opts.Storage.Root == "" {
		return errors.New("--storage-root is required")
	}
	if registry != "" && opts.NodeID == "" {
		return errors.New("--registration-dir needs --node-id: the kubelet registers a Node service")
	}
	d, err := csi.New(opts)
	if err != nil {
		return err
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	g, ctx := errgroup.WithContext(ctx)
	l, socket, err := csi.Listen(endpoint)
	if err != nil {
		return err
	}
	g.Go(func() error { return d.Serve(ctx, l) })
	// the kubelet learns of the driver only once its CSI socket answers
	if registry != "" {
		rl, _, err := csi.Listen(csi.RegistrationSocket(registry))
		if err != nil {
			cancel()
			return errors.Join(err, g.Wait())
		}
		r := &csi.Registrar{CSIEndpoint: socket}
		g.Go(func() error { return r.Serve(ctx, rl) })
	}
	return g.Wait()
}
