// The feed's types (RemoteMessage, MessageContext, FeedOptions, FeedIssue, FeedFetchError) are part of MessageCenter's
// API: `import DialogGate` brings them, so an app imports one module.
@_exported public import MessageFeed
