// strings.c — string handling with the C library and by hand: copying, searching, comparing,
// reversing, case conversion, tokenising and number parsing.
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void reverse(char* text) {
    for (size_t left = 0, right = strlen(text); left + 1 < right; ++left, --right) {
        char swap = text[left];
        text[left] = text[right - 1];
        text[right - 1] = swap;
    }
}

static int is_palindrome(const char* text) {
    size_t length = strlen(text);
    for (size_t i = 0; i < length / 2; ++i) {
        if (tolower((unsigned char)text[i]) != tolower((unsigned char)text[length - 1 - i])) return 0;
    }
    return 1;
}

int main(void) {
    char buffer[128];
    strcpy(buffer, "The quick brown fox");
    strcat(buffer, " jumps over the lazy dog");
    printf("sentence: %s (%u characters)\n", buffer, (unsigned)strlen(buffer));
    printf("'fox' found at offset %d\n", (int)(strstr(buffer, "fox") - buffer));
    printf("last 'o' at offset %d\n", (int)(strrchr(buffer, 'o') - buffer));

    int words = 0;
    char copy[128];
    strcpy(copy, buffer);
    for (char* word = strtok(copy, " "); word; word = strtok(NULL, " ")) {
        printf("%s%s", words ? "," : "words:", word);
        ++words;
    }
    printf(" (%d words)\n", words);

    reverse(buffer);
    printf("reversed: %s\n", buffer);
    for (char* c = buffer; *c; ++c) *c = (char)toupper((unsigned char)*c);
    printf("upper: %s\n", buffer);

    const char* candidates[] = {"Racecar", "rvformer", "A", "abba", "abca"};
    for (int i = 0; i < 5; ++i) printf("%s is %sa palindrome\n", candidates[i], is_palindrome(candidates[i]) ? "" : "not ");

    printf("strcmp: %d %d %d\n", strcmp("abc", "abd") < 0, strcmp("b", "a") > 0, strcmp("same", "same"));
    printf("strtol: %ld %ld %ld\n", strtol("-12345", NULL, 10), strtol("ff", NULL, 16), strtol("0777", NULL, 0));
    errno = 0;
    long overflow = strtol("99999999999999999999", NULL, 10);
    printf("strtol overflow: %ld, errno is ERANGE: %d\n", overflow, errno == ERANGE);

    char moving[] = "0123456789";
    memmove(moving + 2, moving, 5);
    printf("memmove: %s\n", moving);
    return 0;
}
