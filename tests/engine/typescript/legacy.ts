// Subscriptions a team wired by hand with raw pulumi-gcp resources, bypassing the component: the
// TypeScript copy of stacks/legacy.py. This is what the `legacy` stack declares on purpose, to show
// what pushguard's policy pack catches where the component cannot help: nothing here is validated
// before it is registered.
import * as gcp from "@pulumi/gcp";
import * as pulumi from "@pulumi/pulumi";

/**
 * One hand-wired push subscription: the account is created here (`accountId`) or named
 * (`serviceAccountEmail`); `project` overrides the stack's `gcp:project`.
 */
export interface RawSubscription {
    name: string;
    topic: string;
    endpoint: string;
    accountId?: string;
    serviceAccountEmail?: string;
    project?: string;
}

/** The topic, the push-auth account (when created here) and the subscription. */
export function declare(raw: RawSubscription): gcp.pubsub.Subscription {
    const topic = new gcp.pubsub.Topic(raw.topic, { name: raw.topic, project: raw.project });
    let email: pulumi.Input<string> | undefined = raw.serviceAccountEmail;
    if (raw.accountId) {
        const account = new gcp.serviceaccount.Account(`${raw.name}-pusher`, {
            accountId: raw.accountId,
            project: raw.project,
        });
        email = account.email;
    }
    return new gcp.pubsub.Subscription(raw.name, {
        name: raw.name,
        project: raw.project,
        topic: topic.id,
        pushConfig: {
            pushEndpoint: raw.endpoint,
            oidcToken: { serviceAccountEmail: email!, audience: raw.endpoint },
        },
    });
}
