// *** What `pulumi package add ../../../components` generates for TypeScript (the npm package
// `@pulumi/pushguard` under sdks/pushguard: pulumi's nodejs codegen, pkg/codegen/nodejs/gen.go of
// pulumi/pulumi, commit 1b5949891b3cefcb9974752b24a5ecef0acc86c8), trimmed to its TypeScript sources:
// the generated package compiles them with tsc in a postinstall script and is linked into
// package.json as a file: dependency; here the program imports the sources (./sdks/pushguard) and
// ts-node compiles them with the program. ***

export { PushSubscription, PushSubscriptionArgs } from "./pushSubscription";
export * as types from "./types";
