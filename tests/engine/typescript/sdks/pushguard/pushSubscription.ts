// *** The resource class pulumi's nodejs codegen generates for a component of a plugin's schema
// (genResource in pkg/codegen/nodejs/gen.go of pulumi/pulumi, commit
// 1b5949891b3cefcb9974752b24a5ecef0acc86c8): a ComponentResource registered with `remote: true`,
// which the engine has the package's plugin (components/) construct. Descriptions shortened. ***

import * as pulumi from "@pulumi/pulumi";
import * as types from "./types";
import * as utilities from "./utilities";

/**
 * A Pub/Sub push subscription with everything around it wired: the push-auth service account,
 * the invoker binding, the Pub/Sub service agent's token-creator grant, the dead-letter grants.
 */
export class PushSubscription extends pulumi.ComponentResource {
    /** @internal */
    public static readonly __pulumiType = 'pushguard:index:PushSubscription';

    /**
     * Returns true if the given object is an instance of PushSubscription.  This is designed to work even
     * when multiple copies of the Pulumi SDK have been loaded into the same process.
     */
    public static isInstance(obj: any): obj is PushSubscription {
        if (obj === undefined || obj === null) {
            return false;
        }
        return obj['__pulumiType'] === PushSubscription.__pulumiType;
    }

    declare public readonly audience: pulumi.Output<string>;
    declare public /*out*/ readonly deadLetterSubscription: pulumi.Output<string | undefined>;
    declare public /*out*/ readonly deadLetterTopic: pulumi.Output<string | undefined>;
    declare public readonly pushAuthServiceAccountEmail: pulumi.Output<string>;
    declare public /*out*/ readonly serviceAgentEmail: pulumi.Output<string>;
    declare public /*out*/ readonly subscriptionId: pulumi.Output<string>;
    declare public readonly subscriptionName: pulumi.Output<string>;
    declare public /*out*/ readonly subscriptionPath: pulumi.Output<string>;

    /**
     * Create a PushSubscription resource with the given unique name, arguments, and options.
     *
     * @param name The _unique_ name of the resource.
     * @param args The arguments to use to populate this resource's properties.
     * @param opts A bag of options that control this resource's behavior.
     */
    constructor(name: string, args: PushSubscriptionArgs, opts?: pulumi.ComponentResourceOptions) {
        let resourceInputs: pulumi.Inputs = {};
        opts = opts || {};
        if (!opts.id) {
            if (args?.pushEndpoint === undefined && !opts.urn) {
                throw new Error("Missing required property 'pushEndpoint'");
            }
            if (args?.target === undefined && !opts.urn) {
                throw new Error("Missing required property 'target'");
            }
            if (args?.topic === undefined && !opts.urn) {
                throw new Error("Missing required property 'topic'");
            }
            resourceInputs["acceptBacklogLoss"] = args?.acceptBacklogLoss;
            resourceInputs["ackDeadlineSeconds"] = args?.ackDeadlineSeconds;
            resourceInputs["attributes"] = args?.attributes;
            resourceInputs["audience"] = args?.audience;
            resourceInputs["deadLetter"] = args?.deadLetter;
            resourceInputs["deployers"] = args?.deployers;
            resourceInputs["enableMessageOrdering"] = args?.enableMessageOrdering;
            resourceInputs["expirationTtl"] = args?.expirationTtl;
            resourceInputs["filter"] = args?.filter;
            resourceInputs["grantInvoker"] = args?.grantInvoker;
            resourceInputs["inServicePerimeter"] = args?.inServicePerimeter;
            resourceInputs["labels"] = args?.labels;
            resourceInputs["messageRetentionDuration"] = args?.messageRetentionDuration;
            resourceInputs["noWrapper"] = args?.noWrapper;
            resourceInputs["paused"] = args?.paused;
            resourceInputs["project"] = args?.project;
            resourceInputs["projectNumber"] = args?.projectNumber;
            resourceInputs["pushAuthAccountId"] = args?.pushAuthAccountId;
            resourceInputs["pushAuthServiceAccountEmail"] = args?.pushAuthServiceAccountEmail;
            resourceInputs["pushEndpoint"] = args?.pushEndpoint;
            resourceInputs["retainAckedMessages"] = args?.retainAckedMessages;
            resourceInputs["retryPolicy"] = args?.retryPolicy;
            resourceInputs["subscriptionName"] = args?.subscriptionName;
            resourceInputs["target"] = args?.target;
            resourceInputs["tokenCreatorGrant"] = args?.tokenCreatorGrant;
            resourceInputs["topic"] = args?.topic;
            resourceInputs["writeMetadata"] = args?.writeMetadata;
            resourceInputs["deadLetterSubscription"] = undefined /*out*/;
            resourceInputs["deadLetterTopic"] = undefined /*out*/;
            resourceInputs["serviceAgentEmail"] = undefined /*out*/;
            resourceInputs["subscriptionId"] = undefined /*out*/;
            resourceInputs["subscriptionPath"] = undefined /*out*/;
        } else {
            resourceInputs["audience"] = undefined /*out*/;
            resourceInputs["deadLetterSubscription"] = undefined /*out*/;
            resourceInputs["deadLetterTopic"] = undefined /*out*/;
            resourceInputs["pushAuthServiceAccountEmail"] = undefined /*out*/;
            resourceInputs["serviceAgentEmail"] = undefined /*out*/;
            resourceInputs["subscriptionId"] = undefined /*out*/;
            resourceInputs["subscriptionName"] = undefined /*out*/;
            resourceInputs["subscriptionPath"] = undefined /*out*/;
        }
        opts = pulumi.mergeOptions(utilities.resourceOptsDefaults(), opts);
        super(PushSubscription.__pulumiType, name, resourceInputs, opts, true /*remote*/);
    }
}

/**
 * The set of arguments for constructing a PushSubscription resource.
 */
export interface PushSubscriptionArgs {
    acceptBacklogLoss?: boolean;
    ackDeadlineSeconds?: pulumi.Input<number>;
    attributes?: pulumi.Input<{[key: string]: pulumi.Input<string>}>;
    audience?: pulumi.Input<string>;
    deadLetter?: types.DeadLetterArgs;
    deployers?: string[];
    enableMessageOrdering?: pulumi.Input<boolean>;
    expirationTtl?: pulumi.Input<string>;
    filter?: pulumi.Input<string>;
    grantInvoker?: boolean;
    inServicePerimeter?: boolean;
    labels?: pulumi.Input<{[key: string]: pulumi.Input<string>}>;
    messageRetentionDuration?: pulumi.Input<string>;
    noWrapper?: boolean;
    paused?: boolean;
    project?: pulumi.Input<string>;
    projectNumber?: pulumi.Input<string>;
    pushAuthAccountId?: pulumi.Input<string>;
    pushAuthServiceAccountEmail?: pulumi.Input<string>;
    pushEndpoint: pulumi.Input<string>;
    retainAckedMessages?: pulumi.Input<boolean>;
    retryPolicy?: types.RetryPolicyArgs;
    subscriptionName?: pulumi.Input<string>;
    target: types.PushTargetArgs;
    tokenCreatorGrant?: types.TokenCreatorGrant;
    topic: pulumi.Input<string>;
    writeMetadata?: pulumi.Input<boolean>;
}
