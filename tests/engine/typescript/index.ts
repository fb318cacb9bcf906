// Example team program in TypeScript: push subscriptions declared from typed stack config; the
// TypeScript copy of stacks/__main__.py, run on the same stack config files (Pulumi.yaml's
// stackConfigDir).
//
// The stack config (`Pulumi.<stack>.yaml`) lists subscriptions; a typo in a key is an error naming
// it, and pushguard's `PushSubscription` (through its plugin, components/: the SDK in
// sdks/pushguard) does the wiring and the rule checks. `legacySubscriptions` are wired by hand with
// raw pulumi-gcp resources (legacy.ts), as a team that bypasses the component would: the `legacy`
// stack shows what the policy pack catches then.
import * as pulumi from "@pulumi/pulumi";

import { declare, RawSubscription } from "./legacy";
import * as pushguard from "./sdks/pushguard";

interface Target {
    kind: pushguard.types.TargetKind;
    name?: string;
    location?: string;
}

interface Subscription {
    name: string;
    topic: string;
    endpoint: string;
    target: Target;
    audience?: string;
    deadLetter?: { topic?: string; maxDeliveryAttempts?: number };
    retry?: { minimumBackoff?: string; maximumBackoff?: string };
    ackDeadlineSeconds?: number;
    noWrapper?: boolean;
    writeMetadata?: boolean;
    paused?: boolean;
}

const KEYS: Record<string, string[]> = {
    subscription: [
        "name", "topic", "endpoint", "target", "audience", "deadLetter", "retry",
        "ackDeadlineSeconds", "noWrapper", "writeMetadata", "paused",
    ],
    target: ["kind", "name", "location"],
    deadLetter: ["topic", "maxDeliveryAttempts"],
    retry: ["minimumBackoff", "maximumBackoff"],
    legacySubscription: ["name", "topic", "endpoint", "accountId", "serviceAccountEmail", "project"],
};

/** `value` itself, after checking it has only the keys `KEYS[kind]` names (as pydantic's extra="forbid"). */
function checked<T>(value: any, kind: string, where: string): T {
    for (const key of Object.keys(value ?? {})) {
        if (!KEYS[kind].includes(key)) {
            throw new Error(`${where}.${key}: extra inputs are not permitted`);
        }
    }
    for (const inner of ["target", "deadLetter", "retry"]) {
        if (kind === "subscription" && value[inner] !== undefined) {
            checked(value[inner], inner, `${where}.${inner}`);
        }
    }
    return value as T;
}

/** The component's args for one configured subscription (unset options left out). */
function componentArgs(stack: StackConfig, sub: Subscription): pushguard.PushSubscriptionArgs {
    const args: pushguard.PushSubscriptionArgs = {
        topic: sub.topic,
        pushEndpoint: sub.endpoint,
        target: sub.target,
        deployers: stack.deployers,
        inServicePerimeter: stack.inServicePerimeter,
        noWrapper: sub.noWrapper ?? false,
        writeMetadata: sub.writeMetadata ?? false,
        paused: sub.paused ?? false,
    };
    if (stack.projectNumber) {
        args.projectNumber = stack.projectNumber;
    }
    if (sub.audience) {
        args.audience = sub.audience;
    }
    if (sub.ackDeadlineSeconds !== undefined) {
        args.ackDeadlineSeconds = sub.ackDeadlineSeconds;
    }
    if (sub.deadLetter) {
        args.deadLetter = { maxDeliveryAttempts: 5, ...sub.deadLetter };
    }
    if (sub.retry) {
        args.retryPolicy = sub.retry;
    }
    return args;
}

interface StackConfig {
    projectNumber?: string;
    inServicePerimeter: boolean;
    deployers: string[];
    subscriptions: Subscription[];
    legacySubscriptions: RawSubscription[];
}

const config = new pulumi.Config();
const stack: StackConfig = {
    projectNumber: config.get("projectNumber"),
    inServicePerimeter: config.getBoolean("inServicePerimeter") ?? false,
    deployers: config.getObject<string[]>("deployers") ?? [],
    subscriptions: (config.getObject<object[]>("subscriptions") ?? []).map((s, i) =>
        checked<Subscription>(s, "subscription", `subscriptions.${i}`),
    ),
    legacySubscriptions: (config.getObject<object[]>("legacySubscriptions") ?? []).map((s, i) =>
        checked<RawSubscription>(s, "legacySubscription", `legacySubscriptions.${i}`),
    ),
};

const outputs: Record<string, pulumi.Output<string | undefined>> = {};
for (const sub of stack.subscriptions) {
    const component = new pushguard.PushSubscription(sub.name, componentArgs(stack, sub));
    outputs[`${sub.name}.subscription`] = component.subscriptionPath;
    outputs[`${sub.name}.pushAuthServiceAccount`] = component.pushAuthServiceAccountEmail;
    outputs[`${sub.name}.audience`] = component.audience;
}
for (const raw of stack.legacySubscriptions) {
    outputs[`${raw.name}.subscription`] = declare(raw).id;
}

export = outputs;
