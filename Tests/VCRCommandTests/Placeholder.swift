import Testing

@Test func placeholderCommand() {}
