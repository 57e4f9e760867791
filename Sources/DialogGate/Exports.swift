// The feed's types (RemoteMessage, MessageContext, FeedIssue from MessageFeed; FeedOptions, FeedFetchError from
// MessageFeedFetching) are part of MessageCenter's API: `import DialogGate` brings them, so an app imports one module.
@_exported public import MessageFeed
@_exported public import MessageFeedFetching
