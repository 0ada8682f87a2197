// Package deploy holds the manifests that run allot-webhook on a cluster:
// its Namespace, ServiceAccount and read-only RBAC, the Deployment of two
// replicas, the Service, and the ValidatingWebhookConfiguration. Its test
// decodes every manifest into its typed object and checks what the README
// promises of them. Apply them with kubectl apply -f kube/deploy/.
package deploy
