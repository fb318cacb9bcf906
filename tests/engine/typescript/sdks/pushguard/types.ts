// *** The input types and enums of the SDK pulumi's nodejs codegen generates from the plugin's schema
// (types/input.ts and types/enums/index.ts there, folded into one file; descriptions shortened). ***

import * as pulumi from "@pulumi/pulumi";

export const TargetKind = {
    CloudRun: "cloud-run",
    CloudFunctionV1: "cloud-function-v1",
    CloudFunctionV2: "cloud-function-v2",
    External: "external",
} as const;

/** Cloud Run service, 1st- or 2nd-gen Cloud Function, or external endpoint. */
export type TargetKind = (typeof TargetKind)[keyof typeof TargetKind];

export const TokenCreatorGrant = {
    ServiceAccount: "service-account",
    Project: "project",
    None: "none",
} as const;

/** Where the Pub/Sub service agent gets token creator. */
export type TokenCreatorGrant = (typeof TokenCreatorGrant)[keyof typeof TokenCreatorGrant];

/** Dead-letter topic for messages Pub/Sub could not deliver. */
export interface DeadLetterArgs {
    maxDeliveryAttempts?: pulumi.Input<number>;
    messageRetentionDuration?: pulumi.Input<string>;
    subscription?: boolean;
    topic?: pulumi.Input<string>;
}

/** The service behind the endpoint; decides the invoker binding. */
export interface PushTargetArgs {
    customAudiences?: pulumi.Input<pulumi.Input<string>[]>;
    kind: TargetKind;
    location?: pulumi.Input<string>;
    name?: pulumi.Input<string>;
    project?: pulumi.Input<string>;
    url?: pulumi.Input<string>;
}

/** Backoff between redeliveries. */
export interface RetryPolicyArgs {
    maximumBackoff?: pulumi.Input<string>;
    minimumBackoff?: pulumi.Input<string>;
}
