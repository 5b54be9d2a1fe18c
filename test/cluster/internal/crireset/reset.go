// Package crireset empties a container runtime through the CRI, as a kubelet
// does when it removes pods: stopping a sandbox stops its containers, tears its
// network down through CNI (bridge port, IPAM lease, iptables rules) and
// releases its mounts, so a box's `down` leaves nothing of its pods behind.
package crireset

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Run stops and removes every pod sandbox of the runtime at the unix socket.
func Run(ctx context.Context, socket string) error {
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", socket, err)
	}
	defer conn.Close()
	rt := runtimeapi.NewRuntimeServiceClient(conn)
	list, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return fmt.Errorf("listing pod sandboxes of %s: %w", socket, err)
	}
	var errs []error
	for _, sb := range list.Items {
		name := sb.Metadata.Namespace + "/" + sb.Metadata.Name
		if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			errs = append(errs, fmt.Errorf("stopping pod %s: %w", name, err))
			continue
		}
		if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			errs = append(errs, fmt.Errorf("removing pod %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}
