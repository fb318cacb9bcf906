// The orders service's push subscription, from TypeScript. `@pulumi/pushguard` is the SDK that
// `pulumi package add ../..` generates from the plugin's schema (from another repository:
// `pulumi package add github.com/pushguard/pushguard/components@REF`, REF a commit or a release
// tag: docs/install.md); see Pulumi.yaml for the set-up commands.
import * as pulumi from "@pulumi/pulumi";
import * as pushguard from "@pulumi/pushguard";

const config = new pulumi.Config();

const orders = new pushguard.PushSubscription("orders", {
    topic: "orders",
    // Checked before anything is created: HTTPS only, no secrets in the query string.
    pushEndpoint: config.get("pushEndpoint") ?? "https://orders-3kq2x7ab9c-ew.a.run.app/push",
    target: {
        kind: "cloud-run", // or "cloud-function-v1", "cloud-function-v2", "external"
        name: "orders",
        location: "europe-west1",
    },
    ackDeadlineSeconds: 60,
    retryPolicy: { minimumBackoff: "10s", maximumBackoff: "300s" },
    deadLetter: { maxDeliveryAttempts: 10 },
    deployers: ["group:platform@example.com"],
    labels: { team: "orders" },
});

// What the endpoint's receiver checks in each push request's OIDC token (`email`, `aud`).
export const pushAuthServiceAccount = orders.pushAuthServiceAccountEmail;
export const audience = orders.audience;
export const subscription = orders.subscriptionPath;
