// Whether a test is built with AddressSanitizer (GCC defines the first, clang answers the
// second): tests whose subject ASan changes (resident size, signal handling) say so and adapt.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define RECONSTUDIO_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RECONSTUDIO_TEST_ASAN 1
#endif
#endif
